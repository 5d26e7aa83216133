package record

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// maxSlugLen bounds a slug: it becomes part of a branch name and of paths.
const maxSlugLen = 40

// letterFolds spells in ASCII the Latin letters that Unicode does not
// decompose into a base letter and marks (so norm.NFKD leaves them whole).
var letterFolds = map[rune]string{
	'ß': "ss",
	'æ': "ae",
	'ø': "o",
	'œ': "oe",
	'ł': "l",
	'đ': "d",
	'þ': "th",
}

// Slugify makes a branch- and path-safe slug from a title: lower-case
// ASCII letters and digits joined by single hyphens, at most 40 bytes.
// Accented letters lose their marks (Ünïcödé → unicode), a few letters are
// spelled out (ß → ss), anything else separates words. A title with nothing
// left gives "issue".
func Slugify(title string) string {
	var b strings.Builder
	sep := false
	word := func(s string) {
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteString(s)
	}
	// NFKD splits "ü" into "u" and a combining mark, and compatibility
	// forms (fullwidth letters, the "ﬁ" ligature) into plain letters.
	for _, r := range norm.NFKD.String(title) {
		r = unicode.ToLower(r)
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			word(string(r))
		case unicode.Is(unicode.Mn, r):
			// A mark left by the decomposition: the letter it sat on stays.
		case letterFolds[r] != "":
			word(letterFolds[r])
		default:
			sep = true
		}
	}
	s := b.String()
	if len(s) > maxSlugLen {
		s = strings.TrimRight(s[:maxSlugLen], "-")
	}
	if s == "" {
		return "issue"
	}
	return s
}
