package hooks

import (
	"fmt"
	"regexp"
	"strings"
)

// The document hooks read the markdown agents write (review.md, plan.md, ...)
// through one small line-based model: HTML comments are removed first (stage
// templates use them for instructions), ATX headings split the document into
// sections, and fenced code blocks are opaque, so a `# comment` in a shell
// snippet is not a heading and a `- x` in a YAML block is not a list item.

var (
	// An unterminated comment hides the rest of the file, as in HTML.
	commentRE  = regexp.MustCompile(`(?s)<!--.*?(?:-->|$)`)
	headingRE  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	fenceRE    = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})[ \t]*([^`\\s]*)")
	listItemRE = regexp.MustCompile(`^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*?))?[ \t]*$`)
	ruleRE     = regexp.MustCompile(`^ {0,3}([-*_])(?:[ \t]*[-*_]){2,}[ \t]*$`)
	checkboxRE = regexp.MustCompile(`^\[([ xX])\](?:[ \t]+(.*))?$`)
)

// mdLine is one line of a markdown document.
type mdLine struct {
	text string
	// level is the ATX heading level (1-6), 0 for any other line.
	level int
	title string
	// code marks the lines of a fenced code block, fences included; fence
	// marks the fences; info is the opening fence's language word ("yaml"),
	// on every line of the block.
	code, fence bool
	info        string
}

// parseMarkdown splits src into lines, with HTML comments removed.
func parseMarkdown(src string) []mdLine {
	src = commentRE.ReplaceAllString(src, "")
	src = strings.ReplaceAll(src, "\r\n", "\n")
	var (
		out  []mdLine
		open string // the open fence ("```", "~~~~"), "" outside code
		info string
	)
	for _, text := range strings.Split(src, "\n") {
		l := mdLine{text: text}
		if m := fenceRE.FindStringSubmatch(text); m != nil {
			switch {
			case open == "":
				open, info = m[1], strings.ToLower(m[2])
				l.code, l.fence, l.info = true, true, info
				out = append(out, l)
				continue
			case m[1][0] == open[0] && len(m[1]) >= len(open) && m[2] == "":
				l.code, l.fence, l.info = true, true, info
				open, info = "", ""
				out = append(out, l)
				continue
			}
		}
		if open != "" {
			l.code, l.info = true, info
		} else if m := headingRE.FindStringSubmatch(text); m != nil {
			l.level, l.title = len(m[1]), strings.TrimSpace(m[2])
		}
		out = append(out, l)
	}
	return out
}

// findSection returns the body of the section whose `##` or `###` heading
// starts with name (case-insensitive), preferring an exact match. The body
// ends at the next heading of level 1 to 3, so a `###` heading both is a
// section of its own and ends the `##` section above it.
func findSection(lines []mdLine, name string) ([]mdLine, bool) {
	want := strings.ToLower(strings.TrimSpace(name))
	start := -1
	for i, l := range lines {
		if l.level != 2 && l.level != 3 {
			continue
		}
		title := strings.ToLower(l.title)
		if title == want {
			start = i
			break
		}
		if start < 0 && strings.HasPrefix(title, want) {
			start = i
		}
	}
	if start < 0 {
		return nil, false
	}
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if lines[i].level >= 1 && lines[i].level <= 3 {
			end = i
			break
		}
	}
	return lines[start+1 : end], true
}

// sectionTitles lists the `##` and `###` headings, for "no such section".
func sectionTitles(lines []mdLine) []string {
	var out []string
	for _, l := range lines {
		if (l.level == 2 || l.level == 3) && l.title != "" {
			out = append(out, l.title)
		}
	}
	return out
}

// listItem is one list item; box is 0 for a plain item, ' ' for an
// unchecked box and 'x' for a checked one.
type listItem struct {
	text string
	box  byte
}

// listItems scans lines for list items outside code blocks.
func listItems(lines []mdLine) []listItem {
	var out []listItem
	for _, l := range lines {
		if l.code || l.level > 0 || ruleRE.MatchString(l.text) {
			continue
		}
		m := listItemRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		it := listItem{text: m[1]}
		if b := checkboxRE.FindStringSubmatch(it.text); b != nil {
			it.box = strings.ToLower(b[1])[0]
			it.text = strings.TrimSpace(b[2])
		}
		out = append(out, it)
	}
	return out
}

// filled drops items with no text: a template's bare "- " or "1." placeholder
// says nothing.
func filled(items []listItem) []listItem {
	var out []listItem
	for _, it := range items {
		if it.text != "" {
			out = append(out, it)
		}
	}
	return out
}

// hasContent reports whether any line is not blank.
func hasContent(lines []mdLine) bool {
	for _, l := range lines {
		if strings.TrimSpace(l.text) != "" {
			return true
		}
	}
	return false
}

// countWords counts whitespace-separated words outside headings and fences.
func countWords(lines []mdLine) int {
	n := 0
	for _, l := range lines {
		if l.level == 0 && !l.fence {
			n += len(strings.Fields(l.text))
		}
	}
	return n
}

// joinText is the document's text again, without its comments.
func joinText(lines []mdLine) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.text)
	}
	return b.String()
}

// yamlBlocks returns the bodies of the ```yaml and ```yml blocks, in order.
func yamlBlocks(lines []mdLine) []string {
	var (
		out  []string
		body []string
		in   bool
	)
	for _, l := range lines {
		if l.info != "yaml" && l.info != "yml" {
			continue
		}
		switch {
		case l.fence && !in:
			in, body = true, nil
		case l.fence:
			out = append(out, strings.Join(body, "\n"))
			in = false
		default:
			body = append(body, l.text)
		}
	}
	if in { // unterminated: the block runs to the end of the file
		out = append(out, strings.Join(body, "\n"))
	}
	return out
}

// quoteItems lists a few items for a failure reason.
func quoteItems(items []listItem) string {
	const show = 3
	var parts []string
	for i, it := range items {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(items)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("%q", clip(it.text, 60)))
	}
	return strings.Join(parts, ", ")
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// plural is "1 item" or "3 items".
func plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, pick(n, one, many))
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
