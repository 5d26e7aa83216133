package board

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/stages"
)

// drawing is a flow's stage machine laid out for an inline SVG on an
// issue's page: the stages top to bottom, where a phone has room, with
// moves forward past a stage arched on the right and moves back (step
// backs, a person's reject, redirects and rollbacks) dashed on the left.
// Every coordinate is computed here, so the template only places numbers
// and escaped names (docs/SECURITY.md, "The board").
type drawing struct {
	Width, Height int
	Boxes         []box
	Arrows        []arrow
}

// box is a stage: its name (cut to fit, Full in its tooltip) and who acts
// there, with Class saying whether the issue is here, has passed it, or
// has been there.
type box struct {
	X, Y, W, H   int
	TextX, TextY int
	OwnerX       int
	Name, Full   string
	Owner        string
	Class        string
}

// arrow is one move of the machine as an SVG path; Taken when the issue's
// history holds it.
type arrow struct {
	D, Class, Title string
	Taken           bool
}

// The layout's measures, in SVG user units (the SVG scales to the page).
const (
	rowH    = 46
	boxH    = 28
	boxW    = 220
	laneGap = 9
	margin  = 14
	// nameMax is how many characters of a stage's name fit its box
	// beside the owner's word.
	nameMax = 24
)

// drawFlow lays out m's stages and moves, marking where iss is and the
// moves its history took. Moves that stay on a stage (escalate, resume)
// are left out: they are the history table's to show.
func drawFlow(flow *stages.Flow, m *machine.Machine, iss *issues.Issue) drawing {
	at := flow.Index(iss.Stage)
	taken, visited := map[[2]string]bool{}, map[string]bool{}
	for _, h := range iss.History {
		taken[[2]string{h.From, h.To}] = true
		visited[h.To] = true
	}
	var right, left []machine.Edge
	down := map[string]stages.Move{} // stages with a step forward to the next
	for _, e := range m.Edges() {
		from, to := flow.Index(e.From), flow.Index(e.To)
		switch {
		case from < 0 || to < 0 || from == to:
		case to == from+1 && forward(e.Kind):
			down[e.From] = e.Kind // the straight line between the two boxes
		case to > from:
			right = append(right, e)
		default:
			left = append(left, e)
		}
	}
	x0 := margin + laneGap*(len(left)+1)
	d := drawing{Width: x0 + boxW + laneGap*(len(right)+1) + margin, Height: len(flow.Nodes)*rowH + margin}
	mid := func(i int) int { return margin/2 + i*rowH + boxH/2 }
	for i, n := range flow.Nodes {
		y := margin/2 + i*rowH
		b := box{X: x0, Y: y, W: boxW, H: boxH, TextX: x0 + 8, TextY: y + boxH/2 + 4, OwnerX: x0 + boxW - 8,
			Name: cut(n.Path, nameMax), Full: n.Path, Owner: ownerOf(n), Class: "stage"}
		switch {
		case i == at:
			b.Class += " here"
		case visited[n.Path]:
			b.Class += " visited"
		}
		if n.HumanReview() {
			b.Class += " person"
		}
		d.Boxes = append(d.Boxes, b)
		if kind, ok := down[n.Path]; ok {
			a := arrow{D: fmt.Sprintf("M%d %d V%d", x0+boxW/2, y+boxH, y+rowH), Class: "move",
				Title: moveTitle(n.Path, flow.Nodes[i+1].Path, kind), Taken: taken[[2]string{n.Path, flow.Nodes[i+1].Path}]}
			d.Arrows = append(d.Arrows, a.mark())
		}
	}
	// Shorter spans take the inner lanes, so arcs nest rather than cross.
	lane := func(edges []machine.Edge, side int, edgeX int) {
		sortBySpan(flow, edges)
		for k, e := range edges {
			x := edgeX + side*laneGap*(k+1)
			y1, y2 := mid(flow.Index(e.From)), mid(flow.Index(e.To))
			a := arrow{D: fmt.Sprintf("M%d %d H%d V%d H%d", edgeX, y1, x, y2, edgeX), Class: "move",
				Title: moveTitle(e.From, e.To, e.Kind), Taken: taken[[2]string{e.From, e.To}]}
			if !forward(e.Kind) {
				a.Class += " dashed"
			}
			d.Arrows = append(d.Arrows, a.mark())
		}
	}
	lane(right, 1, x0+boxW)
	lane(left, -1, x0)
	return d
}

// mark adds the class of a move the issue took.
func (a arrow) mark() arrow {
	if a.Taken {
		a.Class += " taken"
	}
	return a
}

// moveTitle names a move for its tooltip.
func moveTitle(from, to string, k stages.Move) string {
	return from + " → " + to + " (" + strings.ReplaceAll(string(k), "_", " ") + ")"
}

// forward reports whether a move of kind k is a step forward.
func forward(k stages.Move) bool { return k == stages.MoveAdvance || k == stages.MoveApprove }

// sortBySpan orders edges by how many stages they span, fewest first.
func sortBySpan(flow *stages.Flow, edges []machine.Edge) {
	span := func(e machine.Edge) int {
		s := flow.Index(e.To) - flow.Index(e.From)
		if s < 0 {
			return -s
		}
		return s
	}
	slices.SortStableFunc(edges, func(a, b machine.Edge) int { return cmp.Compare(span(a), span(b)) })
}

// cut shortens s to at most n characters, marking the cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
