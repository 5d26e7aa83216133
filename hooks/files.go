package hooks

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

func fileExists(_ context.Context, c *Call) Outcome {
	name := c.Params.String("file", "")
	path, err := issuePath(c.Issue.Dir, name)
	if err == nil {
		err = checkRegular(c, name, path)
	}
	if err != nil {
		return Failf("%s", err)
	}
	return Pass()
}

// sectionCheck checks one section of a document:
//
//   - empty: no list items with text are left. Prose is fine, so "None" on a
//     line of its own passes, while "- None" is an item and does not: a check
//     cannot tell "- None" from "- None, except the SQL injection".
//   - not_empty: some non-blank line (comments do not count).
//   - all_checked: every checkbox is checked, and there is at least one: a
//     checklist whose boxes were all deleted has not been done.
func sectionCheck(_ context.Context, c *Call) Outcome {
	lines, where, err := docScope(c)
	if err != nil {
		return Failf("%s", err)
	}
	switch expect := c.Params.String("expect", "not_empty"); expect {
	case "empty":
		if items := filled(listItems(lines)); len(items) > 0 {
			return checkFailed(c, fmt.Sprintf("%s still has %s (%s)", where, plural(len(items), "list item", "list items"), quoteItems(items)),
				pick(len(items), "resolve it and remove it", "resolve them and remove them")+` from the section (a plain line such as "None" is fine)`)
		}
	case "not_empty":
		if !hasContent(lines) {
			return checkFailed(c, where+" is empty", "write it")
		}
	case "all_checked":
		var boxes, open []listItem
		for _, it := range listItems(lines) {
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
			return checkFailed(c, fmt.Sprintf("%s has %s (%s)", where, plural(len(open), "unchecked box", "unchecked boxes"), quoteItems(open)),
				pick(len(open), "do it and check the box", "do them and check the boxes")+" (`- [x]`)")
		}
	default:
		return Failf("section_check: unknown expect %q; use empty, not_empty or all_checked", expect)
	}
	return Pass()
}

func hasListItems(_ context.Context, c *Call) Outcome {
	lines, where, err := docScope(c)
	if err != nil {
		return Failf("%s", err)
	}
	min := c.Params.Int("min", 1)
	if n := len(filled(listItems(lines))); n < min {
		return Failf("%s has %s, needs at least %d; add them as `- item` lines, %s", where, plural(n, "list item", "list items"), min, nextHint)
	}
	return Pass()
}

// checkboxChecked finds the boxes whose text contains item. An exact match
// wins over substring matches, so "tests" does not also demand "tests for
// the CLI"; every box that matches must be checked.
func checkboxChecked(_ context.Context, c *Call) Outcome {
	lines, where, err := docScope(c)
	if err != nil {
		return Failf("%s", err)
	}
	item := c.Params.String("item", "")
	want := strings.ToLower(strings.TrimSpace(item))
	var exact, partial []listItem
	for _, it := range listItems(lines) {
		text := strings.ToLower(it.text)
		switch {
		case it.box == 0:
		case text == want:
			exact = append(exact, it)
		case strings.Contains(text, want):
			partial = append(partial, it)
		}
	}
	matches := exact
	if len(matches) == 0 {
		matches = partial
	}
	if len(matches) == 0 {
		return checkFailed(c, fmt.Sprintf("%s has no checkbox %q", where, item), fmt.Sprintf("add `- [ ] %s` and check it when it is done", item))
	}
	for _, it := range matches {
		if it.box != 'x' {
			return checkFailed(c, fmt.Sprintf("%s: box %q is not checked", where, it.text), "do it and check the box (`- [x]`)")
		}
	}
	return Pass()
}

// fieldCheck reads a number from the first ```yaml block of the file that
// holds the field.
func fieldCheck(_ context.Context, c *Call) Outcome {
	file, field := c.Params.String("file", ""), c.Params.String("field", "")
	lines, err := readDoc(c, file)
	if err != nil {
		return Failf("%s", err)
	}
	min, hasMin := c.Params.Number("min")
	max, hasMax := c.Params.Number("max")
	bounds := rangeText(min, hasMin, max, hasMax)

	blocks := yamlBlocks(lines)
	if len(blocks) == 0 {
		return Failf("%s: no ```yaml block; add one with `%s: N` (%s), %s", file, field, bounds, nextHint)
	}
	var (
		val      any
		found    bool
		badYAML  []string
		segments = strings.Split(field, ".")
	)
	for i, b := range blocks {
		var doc any
		if err := yaml.Unmarshal([]byte(b), &doc); err != nil {
			badYAML = append(badYAML, fmt.Sprintf("yaml block %d: %s", i+1, strings.TrimPrefix(err.Error(), "yaml: ")))
			continue
		}
		if val, found = lookupPath(doc, segments); found {
			break
		}
	}
	if !found {
		why := ""
		if len(badYAML) > 0 {
			why = " (" + strings.Join(badYAML, "; ") + ")"
		}
		return Failf("%s: no field %s in its yaml blocks%s; add `%s` (%s), %s", file, field, why, field, bounds, nextHint)
	}
	num, ok := number(val)
	if !ok {
		return Failf("%s: field %s is %q, not a number; write a number (%s), %s", file, field, fmt.Sprint(val), bounds, nextHint)
	}
	if (hasMin && num < min) || (hasMax && num > max) {
		return Failf("%s: field %s is %s, outside the allowed range (%s); do the work that brings it into range and update the field, %s",
			file, field, formatNumber(num), bounds, nextHint)
	}
	return Pass()
}

// lookupPath follows a dot path through maps, and lists by index.
func lookupPath(doc any, path []string) (any, bool) {
	cur := doc
	for _, seg := range path {
		switch node := cur.(type) {
		case map[string]any:
			v, ok := node[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			cur = node[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// number accepts YAML numbers, and numbers written as strings ("8").
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil
	}
	return 0, false
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func rangeText(min float64, hasMin bool, max float64, hasMax bool) string {
	switch {
	case hasMin && hasMax:
		return fmt.Sprintf("allowed %s to %s", formatNumber(min), formatNumber(max))
	case hasMin:
		return "at least " + formatNumber(min)
	case hasMax:
		return "at most " + formatNumber(max)
	}
	return "any number"
}

func minWords(_ context.Context, c *Call) Outcome {
	lines, where, err := docScope(c)
	if err != nil {
		return Failf("%s", err)
	}
	min := c.Params.Int("min", 0)
	if n := countWords(lines); n < min {
		return Failf("%s has %s, needs at least %d; write more, %s", where, plural(n, "word", "words"), min, nextHint)
	}
	return Pass()
}

// containsText checks that a document holds `text`, or every one of
// `values` (the earlier tool's list spelling).
func containsText(_ context.Context, c *Call) Outcome {
	lines, where, err := docScope(c)
	if err != nil {
		return Failf("%s", err)
	}
	want := c.Params.List("values")
	if text, ok := c.Params["text"].(string); ok {
		want = []string{text}
	}
	body := joinText(lines)
	var missing []string
	for _, w := range want {
		if !strings.Contains(body, w) {
			missing = append(missing, w)
		}
	}
	switch {
	case len(missing) == 1:
		return Failf("%s does not contain %q (case matters; HTML comments do not count); add it, %s", where, missing[0], nextHint)
	case len(missing) > 1:
		return Failf("%s does not contain %s (case matters; HTML comments do not count); add them, %s", where, quoteList(missing), nextHint)
	}
	return Pass()
}

func titleSet(_ context.Context, c *Call) Outcome {
	title := strings.TrimSpace(c.Issue.Title)
	if title == "" {
		return Failf("the issue has no title; set a real title that says what the issue is about, %s", nextHint)
	}
	// Titles people type before they know what the issue is.
	switch strings.ToLower(strings.Trim(title, " \t.:!?()[]<>*_-")) {
	case "untitled", "todo", "tbd", "new issue":
		return Failf("the issue title %q is a placeholder; set a real title that says what the issue is about, %s", title, nextHint)
	}
	return Pass()
}
