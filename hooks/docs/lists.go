package docs

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/internal/phrase"
)

// What section_check can demand of a section.
const (
	expectEmpty      = "empty"
	expectNotEmpty   = "not_empty"
	expectAllChecked = "all_checked"
)

var (
	sectionRequired = hooks.String("section",
		"the `##` or `###` section to check: the one whose title starts with this (an exact title wins)").Required()
	expectParam = hooks.Enum("expect",
		"what the section must hold: no list items (empty), any text (not_empty), or checkboxes all checked (all_checked)",
		expectEmpty, expectNotEmpty, expectAllChecked).Default(expectNotEmpty)
	minItemsParam = hooks.Int("min", "the fewest list items with text the document or section must have").Default(1).AtLeast(0)
	itemParam     = hooks.String("item",
		"the checkbox to find by its text, or part of it (case-insensitive; an exact match wins)").Required().Aliases("checkbox")
)

// sectionCheck checks one section of a document:
//
//   - empty: no list items with text are left. Prose is fine, so "None" on a
//     line of its own passes, while "- None" is an item and does not: a check
//     cannot tell "- None" from "- None, except the SQL injection".
//   - not_empty: some visible text (comments do not count).
//   - all_checked: every checkbox is checked, and there is at least one: a
//     checklist whose boxes were all deleted has not been done.
func sectionCheck(_ context.Context, c *hooks.Call) hooks.Outcome {
	s, where, err := docScope(c, sectionRequired.Get(c))
	if err != nil {
		return hooks.Failf("%s", err)
	}
	switch expect := expectParam.Get(c); expect {
	case expectEmpty:
		if items := filled(s.listItems()); len(items) > 0 {
			return checkFailed(c, fmt.Sprintf("%s still has %s (%s)", where, phrase.Plural(len(items), "list item", "list items"), quoteItems(items)),
				phrase.Pick(len(items), "resolve it and remove it", "resolve them and remove them")+` from the section (a plain line such as "None" is fine)`)
		}
	case expectNotEmpty:
		if !s.hasContent() {
			return checkFailed(c, where+" is empty", "write it")
		}
	case expectAllChecked:
		return allChecked(c, s, where)
	default:
		return hooks.Failf("section_check: unknown expect %q; use empty, not_empty or all_checked", expect)
	}
	return hooks.Pass()
}

func allChecked(c *hooks.Call, s scope, where string) hooks.Outcome {
	var boxes, open []listItem
	for _, it := range s.listItems() {
		if it.box != 0 {
			boxes = append(boxes, it)
		}
		if it.box == ' ' {
			open = append(open, it)
		}
	}
	if len(boxes) == 0 {
		return checkFailed(c, where+" has no checkboxes", "restore the checklist (`- [ ] item` lines) and check each box when it is done")
	}
	if len(open) > 0 {
		return checkFailed(c, fmt.Sprintf("%s has %s (%s)", where, phrase.Plural(len(open), "unchecked box", "unchecked boxes"), quoteItems(open)),
			phrase.Pick(len(open), "do it and check the box", "do them and check the boxes")+" (`- [x]`)")
	}
	return hooks.Pass()
}

func hasListItems(_ context.Context, c *hooks.Call) hooks.Outcome {
	s, where, err := docScope(c, sectionParam.Get(c))
	if err != nil {
		return hooks.Failf("%s", err)
	}
	min := minItemsParam.Get(c)
	if n := len(filled(s.listItems())); n < min {
		return hooks.Failf("%s has %s, needs at least %d; add them as `- item` lines, %s",
			where, phrase.Plural(n, "list item", "list items"), min, phrase.NextHint)
	}
	return hooks.Pass()
}

// checkboxChecked finds the boxes whose text contains item. An exact match
// wins over substring matches, so "tests" does not also demand "tests for
// the CLI"; every box that matches must be checked.
func checkboxChecked(_ context.Context, c *hooks.Call) hooks.Outcome {
	s, where, err := docScope(c, sectionParam.Get(c))
	if err != nil {
		return hooks.Failf("%s", err)
	}
	item := itemParam.Get(c)
	matches := matchingBoxes(s.listItems(), item)
	if len(matches) == 0 {
		return checkFailed(c, fmt.Sprintf("%s has no checkbox %q", where, item), fmt.Sprintf("add `- [ ] %s` and check it when it is done", item))
	}
	for _, it := range matches {
		if it.box != 'x' {
			return checkFailed(c, fmt.Sprintf("%s: box %q is not checked", where, it.text), "do it and check the box (`- [x]`)")
		}
	}
	return hooks.Pass()
}

// matchingBoxes are the boxes whose text is item (case-insensitive), else
// those whose text contains it.
func matchingBoxes(items []listItem, item string) []listItem {
	want := strings.ToLower(strings.TrimSpace(item))
	var exact, partial []listItem
	for _, it := range items {
		text := strings.ToLower(it.text)
		switch {
		case it.box == 0:
		case text == want:
			exact = append(exact, it)
		case strings.Contains(text, want):
			partial = append(partial, it)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return partial
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
