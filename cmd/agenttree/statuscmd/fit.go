package statuscmd

import (
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/agenttree/agenttree/internal/textsafe"
)

// tableGap is the space between two columns of the status table.
const tableGap = 2

// terminalWidth is the width of the terminal out writes to, $COLUMNS when
// the terminal does not say; 0 when out is no terminal (a pipe, a file),
// where nothing is cut: a program reads the whole of each cell.
func terminalWidth(out io.Writer, getenv func(string) string) int {
	f, ok := out.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return w
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// fitColumns cuts the cells of table (rows of cells, the header first)
// so that its lines, gap spaces between columns, are at most width runes
// wide. The widest column is narrowed first, one rune at a time, so the
// long cells (what an issue waits on, its title) give way before the
// short ones; no column narrows below its header, and the first (the
// issue's id) never does. A cut cell ends in "…". width <= 0 leaves the
// table whole. When even the narrowest columns do not fit, the lines are
// as narrow as they can be, and the terminal wraps them.
func fitColumns(table [][]string, gap, width int) {
	if width <= 0 || len(table) == 0 {
		return
	}
	n := len(table[0])
	widths := make([]int, n)
	for _, row := range table {
		for c, cell := range row {
			widths[c] = max(widths[c], utf8.RuneCountInString(cell))
		}
	}
	least := make([]int, n)
	for c, head := range table[0] {
		least[c] = min(widths[c], utf8.RuneCountInString(head))
	}
	least[0] = widths[0]
	total := gap * (n - 1)
	for _, w := range widths {
		total += w
	}
	for total > width {
		widest := -1
		for c := range n {
			if widths[c] > least[c] && (widest < 0 || widths[c] > widths[widest]) {
				widest = c
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
		total--
	}
	for _, row := range table {
		for c, cell := range row {
			if len(cell) > widths[c] { // bytes ≥ runes: most cells skip the count
				row[c] = textsafe.Clip(cell, widths[c])
			}
		}
	}
}
