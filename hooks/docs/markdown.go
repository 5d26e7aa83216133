package docs

import (
	"bytes"
	"strings"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// The document hooks read the markdown agents write (review.md, plan.md,
// ...) as CommonMark, parsed by goldmark, with GitHub's task lists. HTML
// comments are never read (stage templates use them for instructions),
// top-level `##` and `###` headings split a document into sections, and
// code blocks are opaque: a `# comment` in a shell snippet is not a
// heading, and a `- x` in a YAML block is not a list item.

// document is a parsed markdown file.
type document struct {
	src  []byte
	root ast.Node
	// blocks are the top-level blocks, in order: sections are runs of them.
	blocks []ast.Node
	// hidden are the byte ranges of the HTML comments, in order.
	hidden []text.Segment
}

// markdown is the parser, built on first use and then shared: goldmark's
// block and inline parsers keep no state between parses (its defaults are
// package-level values every goldmark instance shares), and each parse gets
// its own context. It is goldmark.DefaultParser built here, so that the
// goldmark package, and with it the HTML renderer nothing here uses, is not
// linked: its tables were initialised at every command's start.
var markdown = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))
})

func parseDocument(src []byte) *document {
	// Line ends as CommonMark reads them (CRLF, or CR alone), and no byte
	// order mark before the first heading.
	src = bytes.TrimPrefix(src, []byte("\uFEFF"))
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	src = bytes.ReplaceAll(src, []byte("\r"), []byte("\n"))
	root := markdown().Parse(text.NewReader(src))
	d := &document{src: src, root: root}
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		d.blocks = append(d.blocks, n)
	}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			d.hidden = append(d.hidden, comments(n, src)...)
		}
		return ast.WalkContinue, nil
	})
	return d
}

// comments returns the HTML comments n is or holds directly. A comment
// block ends at its `-->`; the rest of that line is text, as a browser
// shows it. A comment that is never closed hides the rest of its block,
// which for a comment block is the rest of the document.
func comments(n ast.Node, src []byte) []text.Segment {
	switch n := n.(type) {
	case *ast.HTMLBlock:
		lines := blockLines(n)
		if n.HTMLBlockType != ast.HTMLBlockType2 || len(lines) == 0 {
			return nil
		}
		start, stop := lines[0].Start, lines[len(lines)-1].Stop
		if end := bytes.Index(src[start:stop], []byte("-->")); end >= 0 {
			stop = start + end + len("-->")
		}
		return []text.Segment{text.NewSegment(start, stop)}
	case *ast.RawHTML:
		if n.Segments.Len() == 0 {
			return nil
		}
		if first := n.Segments.At(0); !bytes.HasPrefix(first.Value(src), []byte("<!--")) {
			return nil
		}
		return n.Segments.Sliced(0, n.Segments.Len())
	}
	return nil
}

// blockLines are the source lines of a leaf block; an HTML block's
// closing line included.
func blockLines(n ast.Node) []text.Segment {
	lines := n.Lines().Sliced(0, n.Lines().Len())
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		lines = append(lines, h.ClosureLine)
	}
	return lines
}

// visible is the source in [start, stop) without its HTML comments.
func (d *document) visible(start, stop int) string {
	var b strings.Builder
	for _, h := range d.hidden {
		if h.Stop <= start {
			continue
		}
		if h.Start >= stop {
			break
		}
		if h.Start > start {
			b.Write(d.src[start:h.Start])
		}
		start = max(start, h.Stop)
	}
	if start < stop {
		b.Write(d.src[start:stop])
	}
	return b.String()
}

// leafText is the visible text of a leaf block, one line per source line,
// without the container markers (`- `, `> `) and without a task list
// item's `[ ]`.
func (d *document) leafText(n ast.Node) []string {
	out := d.lines(n)
	if _, ok := taskBox(n, out); ok {
		out[0] = out[0][3:]
	}
	return out
}

// lines are the visible source lines of a leaf block.
func (d *document) lines(n ast.Node) []string {
	var out []string
	for _, seg := range blockLines(n) {
		out = append(out, d.visible(seg.Start, seg.Stop))
	}
	return out
}

// taskBox is the box of a task list item (GitHub's task lists), when n
// is an item's first block and its text lines starts with `[ ]`, `[x]` or
// `[X]`: ' ' or 'x'. The rule is goldmark's task list extension's, read
// here rather than by the extension, whose package-level tables every
// agenttree command would build at start (0.8 ms, measured with
// GODEBUG=inittrace=1).
func taskBox(n ast.Node, lines []string) (byte, bool) {
	if _, item := n.Parent().(*ast.ListItem); !item || n.Parent().FirstChild() != n || n.Kind() != ast.KindParagraph && n.Kind() != ast.KindTextBlock {
		return 0, false
	}
	if len(lines) == 0 || len(lines[0]) < 3 || lines[0][0] != '[' || lines[0][2] != ']' {
		return 0, false
	}
	switch lines[0][1] {
	case ' ', '\t':
		return ' ', true
	case 'x', 'X':
		return 'x', true
	}
	return 0, false
}

// heading is a top-level heading.
type heading struct {
	index int // in document.blocks
	level int
	title string
}

func (d *document) headings() []heading {
	var out []heading
	for i, b := range d.blocks {
		if h, ok := b.(*ast.Heading); ok {
			out = append(out, heading{index: i, level: h.Level, title: joinTrimmed(d.leafText(h))})
		}
	}
	return out
}

// whole is the whole document as a scope.
func (d *document) whole() scope { return scope{doc: d, blocks: d.blocks, start: 0, stop: len(d.src)} }

// section returns the body of the section whose `##` or `###` heading
// starts with name (case-insensitive), preferring an exact match, and how
// many sections have that exact title: a check must not read one of two
// "Critical Issues" sections and pass over the other. The body ends at the
// next heading of level 1 to 3, so a `###` heading both is a section of
// its own and ends the `##` section above it.
func (d *document) section(name string) (body scope, exact int, ok bool) {
	want := strings.ToLower(strings.TrimSpace(name))
	headings := d.headings()
	at := -1
	for i, h := range headings {
		if h.level != 2 && h.level != 3 {
			continue
		}
		title := strings.ToLower(h.title)
		switch {
		case title == want:
			if exact == 0 {
				at = i
			}
			exact++
		case exact == 0 && at < 0 && strings.HasPrefix(title, want):
			at = i
		}
	}
	if at < 0 {
		return scope{}, 0, false
	}
	end := len(d.blocks)
	for _, h := range headings[at+1:] {
		if h.level <= 3 {
			end = h.index
			break
		}
	}
	return d.span(headings[at].index+1, end), exact, true
}

// sectionTitles lists the `##` and `###` headings, for "no such section".
func (d *document) sectionTitles() []string {
	var out []string
	for _, h := range d.headings() {
		if (h.level == 2 || h.level == 3) && h.title != "" {
			out = append(out, h.title)
		}
	}
	return out
}

// span is the scope of blocks[i:j], with the source lines they start on.
func (d *document) span(i, j int) scope {
	s := scope{doc: d, stop: len(d.src)}
	if j < len(d.blocks) {
		s.stop = d.lineStart(d.blocks[j])
	}
	s.start = s.stop
	if i < j {
		s.blocks, s.start = d.blocks[i:j], d.lineStart(d.blocks[i])
	}
	return s
}

// lineStart is where the line a block starts on begins.
func (d *document) lineStart(n ast.Node) int {
	pos := n.Pos()
	if pos < 0 || pos > len(d.src) {
		return 0
	}
	return bytes.LastIndexByte(d.src[:pos], '\n') + 1
}

// yamlBlocks returns the bodies of the ```yaml and ```yml blocks, in order.
// A block that is never closed runs to the end of the document.
func (d *document) yamlBlocks() []string {
	var out []string
	_ = ast.Walk(d.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		code, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		if lang := strings.ToLower(string(code.Language(d.src))); lang == "yaml" || lang == "yml" {
			var b strings.Builder
			for _, seg := range blockLines(code) {
				b.Write(seg.Value(d.src))
			}
			out = append(out, b.String())
		}
		return ast.WalkSkipChildren, nil
	})
	return out
}

// scope is the part of a document a check reads: the whole of it, or one
// section's body.
type scope struct {
	doc    *document
	blocks []ast.Node
	// start and stop bound the source the blocks span.
	start, stop int
}

// text is the scope's source without its HTML comments.
func (s scope) text() string { return s.doc.visible(s.start, s.stop) }

// hasContent reports whether the scope has any visible text.
func (s scope) hasContent() bool { return strings.TrimSpace(s.text()) != "" }

// listItem is one list item; box is 0 for a plain item, ' ' for an
// unchecked box and 'x' for a checked one.
type listItem struct {
	text string
	box  byte
}

// listItems lists the items of every list in the scope, nested ones
// included.
func (s scope) listItems() []listItem {
	var out []listItem
	s.walk(func(n ast.Node) ast.WalkStatus {
		if li, ok := n.(*ast.ListItem); ok {
			out = append(out, s.doc.item(li))
		}
		return ast.WalkContinue
	})
	return out
}

// item reads a list item: the text of its first block, and its box.
func (d *document) item(li *ast.ListItem) listItem {
	first := li.FirstChild()
	if first == nil {
		return listItem{}
	}
	lines := d.lines(first)
	box, ok := taskBox(first, lines)
	if ok {
		lines[0] = lines[0][3:]
	}
	return listItem{text: joinTrimmed(lines), box: box}
}

// words counts the words of the scope's text: code counts, headings,
// list markers, task boxes and comments do not.
func (s scope) words() int {
	n := 0
	s.walk(func(node ast.Node) ast.WalkStatus {
		if _, ok := node.(*ast.Heading); ok {
			return ast.WalkSkipChildren
		}
		if node.Type() == ast.TypeBlock {
			for _, line := range s.doc.leafText(node) {
				n += len(strings.Fields(line))
			}
		}
		return ast.WalkContinue
	})
	return n
}

// walk calls visit on every node of the scope as it is entered.
func (s scope) walk(visit func(ast.Node) ast.WalkStatus) {
	for _, b := range s.blocks {
		_ = ast.Walk(b, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			return visit(n), nil
		})
	}
}

// joinTrimmed joins lines into one, each trimmed, with single spaces.
func joinTrimmed(lines []string) string {
	var parts []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}
