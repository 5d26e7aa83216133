package docs

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHeadingsCommentsFences(t *testing.T) {
	doc := parseDocument([]byte("# Title\r\n" +
		"## Plan ##\n" +
		"<!-- ## Hidden\n" +
		"- hidden item -->\n" +
		"```bash\n" +
		"# not a heading\n" +
		"```\n" +
		"##not a heading either\n" +
		"    ### indented too far\n" +
		"###\n"))
	var titles []string
	for _, h := range doc.headings() {
		titles = append(titles, h.title)
	}
	assert.Equal(t, []string{"Title", "Plan", ""}, titles)
	assert.NotContains(t, doc.whole().text(), "hidden")
	assert.Contains(t, doc.whole().text(), "# not a heading")
}

func TestFindSection(t *testing.T) {
	doc := parseDocument([]byte(`# Review
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
`))
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
			body, _, ok := doc.section(tt.name)
			assert.Equal(t, tt.found, ok)
			var got []string
			for _, it := range body.listItems() {
				got = append(got, it.text)
			}
			assert.Equal(t, tt.want, got)
		})
	}
	assert.Equal(t, []string{"Critical Issues (blocking)", "Security", "Critical Issues", "Deferred"}, doc.sectionTitles())
	body, _, _ := doc.section("security")
	assert.Equal(t, "- b\n#### Detail\n- c\n", body.text(), "the body is the source between the headings")
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
		{"- outer\n    - nested", []listItem{{text: "outer"}, {text: "nested"}}},
		{"- [ ] open", []listItem{{text: "open", box: ' '}}},
		{"- [x] done", []listItem{{text: "done", box: 'x'}}},
		{"* [X] DONE", []listItem{{text: "DONE", box: 'x'}}},
		{"- [ ]", []listItem{{text: "", box: ' '}}},
		{"-", []listItem{{text: ""}}},
		{"- two\n  lines", []listItem{{text: "two lines"}}},
		{"- item <!-- with a note -->", []listItem{{text: "item"}}},
		{"> - quoted", []listItem{{text: "quoted"}}},
		{"---", nil},
		{"* * *", nil},
		{"**bold** prose", nil},
		{"-dash without space", nil},
		{"1.5 is a number", nil},
		{"None", nil},
		{"```yaml\n- inside code\n```", nil},
		{"    - indented code", nil},
		{"<!-- - [ ] commented -->", nil},
		{"<details>\n- inside an HTML block\n</details>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			assert.Equal(t, tt.want, parseDocument([]byte(tt.line)).whole().listItems())
		})
	}
}

func TestSetextHeadingsAreSections(t *testing.T) {
	doc := parseDocument([]byte("Summary\n-------\n- a\n\nNotes\n=====\n- b\n"))
	body, _, ok := doc.section("summary")
	assert.True(t, ok)
	assert.Equal(t, []listItem{{text: "a"}}, body.listItems(), "ends at the level 1 heading")
}

func TestCommentsHideOnlyThemselves(t *testing.T) {
	doc := parseDocument([]byte("<!-- note --> shown\nkept <!-- inline\nacross lines --> too\n<!-- never closed\n- hidden\n"))
	assert.Equal(t, " shown\nkept  too\n", doc.whole().text())
	assert.Empty(t, doc.whole().listItems())
}

func TestYAMLBlocks(t *testing.T) {
	doc := parseDocument([]byte("```yaml\na: 1\n```\n" +
		"```json\n{}\n```\n" +
		"~~~YML\nb: 2\n```\nc: 3\n~~~\n" +
		"<!--\n```yaml\nhidden: 1\n```\n-->\n" +
		"```yaml\nd: 4\n"))
	assert.Equal(t, []string{"a: 1\n", "b: 2\n```\nc: 3\n", "d: 4\n"}, doc.yamlBlocks())
	assert.Empty(t, parseDocument(nil).yamlBlocks())
}

func TestCountWords(t *testing.T) {
	doc := parseDocument([]byte("## Heading words\none two <!-- three four -->\n```go\nfive six\n```\n\n  seven\t eight  \n- [ ] nine\n> ten"))
	assert.Equal(t, 8, doc.whole().words(), "one two five six seven eight nine ten")
}

// The parser is built once and shared: documents parsed at the same time
// read as each does alone.
func TestParseConcurrently(t *testing.T) {
	srcs := []string{
		"## Plan\n- [x] one\n- [ ] two\n",
		"# Title\n<!-- ## Hidden -->\n## Review\ntext\n",
		"```\n## not a heading\n```\n## Notes\n",
	}
	read := func(src string) []string {
		doc := parseDocument([]byte(src))
		out := []string{doc.whole().text()}
		for _, h := range doc.headings() {
			out = append(out, h.title)
		}
		return out
	}
	want := make([][]string, len(srcs))
	for i, src := range srcs {
		want[i] = read(src)
	}
	var wg sync.WaitGroup
	for range 20 {
		for i, src := range srcs {
			wg.Go(func() { assert.Equal(t, want[i], read(src)) })
		}
	}
	wg.Wait()
}
