package docs

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/internal/phrase"
)

var (
	fieldParam = hooks.String("field",
		"a dot path into the document's ```yaml blocks (scores.overall; list items by index: reviews.0.score)").Required().Aliases("path")
	minValueParam = hooks.Number("min", "the lowest value allowed; unset: no lower bound")
	maxValueParam = hooks.Number("max", "the highest value allowed; unset: no upper bound")
)

// fieldCheck reads a number from the first ```yaml block of the file that
// holds the field.
func fieldCheck(_ context.Context, c *hooks.Call) hooks.Outcome {
	file, field := fileParam.Get(c), fieldParam.Get(c)
	doc, err := readDoc(c, file)
	if err != nil {
		return hooks.Failf("%s", err)
	}
	min, hasMin := minValueParam.Lookup(c)
	max, hasMax := maxValueParam.Lookup(c)
	bounds := rangeText(min, hasMin, max, hasMax)

	blocks := doc.yamlBlocks()
	if len(blocks) == 0 {
		return hooks.Failf("%s: no ```yaml block; add one with `%s: N` (%s), %s", file, field, bounds, phrase.NextHint)
	}
	val, found, badYAML := findField(blocks, strings.Split(field, "."))
	if !found {
		why := ""
		if len(badYAML) > 0 {
			why = " (" + strings.Join(badYAML, "; ") + ")"
		}
		return hooks.Failf("%s: no field %s in its yaml blocks%s; add `%s` (%s), %s", file, field, why, field, bounds, phrase.NextHint)
	}
	num, ok := number(val)
	if !ok {
		return hooks.Failf("%s: field %s is %q, not a number; write a number (%s), %s", file, field, fmt.Sprint(val), bounds, phrase.NextHint)
	}
	if (hasMin && num < min) || (hasMax && num > max) {
		return hooks.Failf("%s: field %s is %s, outside the allowed range (%s); do the work that brings it into range and update the field, %s",
			file, field, formatNumber(num), bounds, phrase.NextHint)
	}
	return hooks.Pass()
}

// findField looks path up in each block in turn; badYAML says which
// blocks could not be read.
func findField(blocks []string, path []string) (val any, found bool, badYAML []string) {
	for i, b := range blocks {
		var doc any
		if err := yaml.Unmarshal([]byte(b), &doc); err != nil {
			badYAML = append(badYAML, fmt.Sprintf("yaml block %d: %s", i+1, strings.TrimPrefix(err.Error(), "yaml: ")))
			continue
		}
		if val, found = lookupPath(doc, path); found {
			return val, true, badYAML
		}
	}
	return nil, false, badYAML
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
