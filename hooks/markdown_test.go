package hooks

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseMarkdownHeadingsCommentsFences(t *testing.T) {
	lines := parseMarkdown("# Title\r\n" +
		"## Plan ##\n" +
		"<!-- ## Hidden\n" +
		"- hidden item -->\n" +
		"```bash\n" +
		"# not a heading\n" +
		"```\n" +
		"##not a heading either\n" +
		"    ### indented too far\n" +
		"###\n")
	var headings []string
	for _, l := range lines {
		if l.level > 0 {
			headings = append(headings, l.title)
		}
	}
	assert.Equal(t, []string{"Title", "Plan", ""}, headings)
	for _, l := range lines {
		assert.NotContains(t, l.text, "hidden")
	}
}

func TestFindSection(t *testing.T) {
	doc := parseMarkdown(`# Review
## Critical Issues (blocking)
- a
### Security
- b
#### Detail
- c
## Critical Issues
- d
## Deferred
- e
# Appendix
- f
`)
	tests := []struct {
		name  string
		want  []string // the section's list items
		found bool
	}{
		{"critical issues", []string{"d"}, true}, // exact match beats the earlier prefix match
		{"Critical", []string{"a"}, true},        // prefix, first one
		{"  SECURITY ", []string{"b", "c"}, true},
		{"Deferred", []string{"e"}, true}, // ends at the h1
		{"Detail", nil, false},            // h4 is not a section
		{"Review", nil, false},            // neither is h1
		{"Missing", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ok := findSection(doc, tt.name)
			assert.Equal(t, tt.found, ok)
			var got []string
			for _, it := range listItems(body) {
				got = append(got, it.text)
			}
			assert.Equal(t, tt.want, got)
		})
	}
	assert.Equal(t, []string{"Critical Issues (blocking)", "Security", "Critical Issues", "Deferred"}, sectionTitles(doc))
}

func TestListItems(t *testing.T) {
	tests := []struct {
		line string
		want []listItem
	}{
		{"- dash", []listItem{{text: "dash"}}},
		{"* star", []listItem{{text: "star"}}},
		{"+ plus", []listItem{{text: "plus"}}},
		{"12. numbered", []listItem{{text: "numbered"}}},
		{"3) paren", []listItem{{text: "paren"}}},
		{"    - nested", []listItem{{text: "nested"}}},
		{"- [ ] open", []listItem{{text: "open", box: ' '}}},
		{"- [x] done", []listItem{{text: "done", box: 'x'}}},
		{"* [X] DONE", []listItem{{text: "DONE", box: 'x'}}},
		{"- [ ]", []listItem{{text: "", box: ' '}}},
		{"-", []listItem{{text: ""}}},
		{"---", nil},
		{"* * *", nil},
		{"**bold** prose", nil},
		{"-dash without space", nil},
		{"1.5 is a number", nil},
		{"None", nil},
		{"```yaml\n- inside code\n```", nil},
		{"<!-- - [ ] commented -->", nil},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			assert.Equal(t, tt.want, listItems(parseMarkdown(tt.line)))
		})
	}
}

func TestYAMLBlocks(t *testing.T) {
	doc := parseMarkdown("```yaml\na: 1\n```\n" +
		"```json\n{}\n```\n" +
		"~~~YML\nb: 2\n```\nc: 3\n~~~\n" +
		"<!--\n```yaml\nhidden: 1\n```\n-->\n" +
		"```yaml\nd: 4\n")
	assert.Equal(t, []string{"a: 1", "b: 2\n```\nc: 3", "d: 4\n"}, yamlBlocks(doc))
}

func TestCountWords(t *testing.T) {
	doc := parseMarkdown("## Heading words\none two <!-- three four -->\n```go\nfive six\n```\n\n  seven\t eight  ")
	assert.Equal(t, 6, countWords(doc))
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 8}
	for _, s := range []string{"abc", "defgh", "ijk", "0123456789XYZ"} {
		n, err := b.Write([]byte(s))
		assert.NoError(t, err)
		assert.Equal(t, len(s), n)
	}
	assert.Equal(t, "56789XYZ", b.String())
	assert.Equal(t, []string{"c", "d"}, lastLines("a\nb\r\nc\nd\n\n  ", 2))
	assert.Nil(t, lastLines(" \n\n", 2))
}
