package docs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzSection reads any document as section_check, checkbox_checked and
// the other document hooks do (markdown.go), and asks it for a section by
// name. Seeded with the stage skills and review documents
// (testdata/fuzz/FuzzSection). What is read stays inside the document and
// outside its comments, every `##`/`###` title the document lists is
// found under that title, and nothing panics.
func FuzzSection(f *testing.F) {
	for _, seed := range []struct{ doc, name string }{
		{"# Review\n## Critical Issues\n- a\n### Security\n- [ ] b\n## Deferred\nNone\n", "Critical Issues"},
		{"## Plan ##\n<!-- ## Hidden\n- hidden -->\n```bash\n# not a heading\n```\n", "plan"},
		{"## Checklist\n- [x] done\n- [ ] open\n  - [X] nested\n", "check"},
		{"<!-- never closed\n## A\n- x\n", "A"},
		{"## A\r\n- x\r\n## A\r\n- y\r\n", "a"},
		{"\uFEFF## T\n> - [ ] quoted\n", "T"},
		{"", ""},
	} {
		f.Add(seed.doc, seed.name)
	}
	f.Fuzz(func(t *testing.T, src, name string) {
		d := parseDocument([]byte(src))
		for _, h := range d.hidden {
			require.True(t, 0 <= h.Start && h.Start <= h.Stop && h.Stop <= len(d.src), "comment %v outside %d bytes", h, len(d.src))
		}
		readScope(t, d, d.whole())
		if s, exact, ok := d.section(name); ok {
			require.GreaterOrEqual(t, exact, 0)
			readScope(t, d, s)
		}
		for _, title := range d.sectionTitles() {
			_, exact, ok := d.section(title)
			require.True(t, ok, "section %q is listed but not found", title)
			require.GreaterOrEqual(t, exact, 1, "section %q", title)
		}
		_ = d.yamlBlocks()
	})
}

// readScope reads s every way the hooks do and checks that it stays
// inside the document.
func readScope(t *testing.T, d *document, s scope) {
	t.Helper()
	require.True(t, 0 <= s.start && s.start <= s.stop && s.stop <= len(d.src), "scope [%d, %d) of %d bytes", s.start, s.stop, len(d.src))
	text := s.text()
	require.LessOrEqual(t, len(text), s.stop-s.start)
	require.Equal(t, strings.TrimSpace(text) != "", s.hasContent())
	for _, it := range s.listItems() {
		require.Contains(t, []byte{0, ' ', 'x'}, it.box)
	}
	require.GreaterOrEqual(t, s.words(), 0)
}
