package docs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Task list boxes are read as goldmark's task list extension reads them,
// without linking it into every command.
func TestTaskBoxesAreTheExtensions(t *testing.T) {
	withExtension := goldmark.New(goldmark.WithExtensions(extension.TaskList)).Parser()
	for _, src := range []string{
		"- [ ] open\n- [x] done\n- [X] done too\n",
		"- [x]no space\n- [ ]\n- [x]\n",
		"- [y] not a box\n- [] not one\n- [ x] not one\n",
		"1. [x] ordered\n2. [ ] ordered\n",
		"- item\n\n  [x] a second paragraph is no box\n",
		"- > [x] a quote is no box\n",
		"- [x] nested\n  - [ ] inner\n    - [x] deeper\n",
		"[x] not in a list\n",
		"- \t[x] after a tab\n",
		"-   [x] indented content\n",
		"- [\tx] tab inside\n- [\t] tab box\n",
		"- <!-- hidden --> [x] after a comment\n",
	} {
		want := map[int]byte{}
		root := withExtension.Parse(text.NewReader([]byte(src)))
		_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if box, ok := n.(*extast.TaskCheckBox); ok && entering {
				want[box.Parent().Lines().At(0).Start] = map[bool]byte{false: ' ', true: 'x'}[box.IsChecked]
			}
			return ast.WalkContinue, nil
		})
		got := map[int]byte{}
		d := parseDocument([]byte(src))
		_ = ast.Walk(d.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if li, ok := n.(*ast.ListItem); ok && entering && li.FirstChild() != nil && li.FirstChild().Lines().Len() > 0 {
				if it := d.item(li); it.box != 0 {
					got[li.FirstChild().Lines().At(0).Start] = it.box
				}
			}
			return ast.WalkContinue, nil
		})
		assert.Equal(t, want, got, "%q", src)
	}
}
