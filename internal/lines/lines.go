// Package lines cuts text into the lines people are shown: the first line
// of an error, the last lines of a command's output.
package lines

import "strings"

// First is s up to its first line break.
func First(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r")
}

// Last returns the last n lines of s (all of them when n <= 0), with
// Windows line ends read as plain ones and trailing blank lines dropped.
func Last(s string, n int) []string {
	s = strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n \t")
	if s == "" {
		return nil
	}
	all := strings.Split(s, "\n")
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// Tail is Last joined back into one string.
func Tail(s string, n int) string { return strings.Join(Last(s, n), "\n") }
