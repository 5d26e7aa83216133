package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine/render"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// SafeTitle is an issue's title as people are shown it: one line, nothing
// a terminal acts on, at most engine.MaxTitleLen long.
func SafeTitle(title string) string { return textsafe.Line(title, engine.MaxTitleLen) }

// Shown is an issue as `issue show` prints it: the issue, and what only
// the config and the store say of it.
type Shown struct {
	Issue *issues.Issue `json:"issue"`
	// Owner says who acts at the issue's stage; "" when the config has no
	// such stage.
	Owner string `json:"owner,omitempty"`
	// Dir is the issue's directory.
	Dir string `json:"dir"`
}

// Show is iss as e's config and store describe it.
func Show(e *engine.Engine, iss *issues.Issue) Shown {
	s := Shown{Issue: iss, Dir: e.Store.Dir(iss.ID)}
	if n, ok := e.Config.Node(iss.Stage); ok {
		s.Owner = render.Describe(n)
	}
	return s
}

// Issue prints an issue and its history, as `issue show` does: the
// status views start with it.
func (p Printer) Issue(s Shown) {
	iss := s.Issue
	fmt.Fprintf(p.Out, "issue %d: %s\n", iss.ID, SafeTitle(iss.Title))
	fmt.Fprintf(p.Out, "  stage:   %s (flow %s, version %d)\n", iss.Stage, iss.Flow, iss.Version)
	if s.Owner != "" {
		fmt.Fprintf(p.Out, "  owner:   %s\n", s.Owner)
	}
	fmt.Fprintf(p.Out, "  branch:  %s\n", iss.Branch)
	if e := iss.EntryPending; e != nil {
		fmt.Fprintf(p.Out, "  unfinished: entering %s did not finish (`agenttree next -i %d` runs it again)\n", e.Stage, iss.ID)
		for _, f := range e.Failures {
			fmt.Fprintf(p.Out, "    - %s\n", Safe(f))
		}
	}
	if iss.PRURL != "" {
		fmt.Fprintf(p.Out, "  pr:      #%d %s\n", iss.PRNumber, iss.PRURL)
	}
	if len(iss.Labels) > 0 {
		fmt.Fprintf(p.Out, "  labels:  %s\n", Safe(strings.Join(iss.Labels, ", ")))
	}
	if len(iss.Vars) > 0 {
		keys := make([]string, 0, len(iss.Vars))
		for k := range iss.Vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := make([]string, len(keys))
		for i, k := range keys {
			pairs[i] = fmt.Sprintf("%s=%v", k, iss.Vars[k])
		}
		fmt.Fprintf(p.Out, "  vars:    %s\n", strings.Join(pairs, " "))
	}
	fmt.Fprintf(p.Out, "  dir:     %s\n", s.Dir)
	fmt.Fprintln(p.Out, "  history:")
	for _, h := range iss.History {
		from := h.From
		if from == "" {
			from = "·"
		}
		line := fmt.Sprintf("    %s  %-9s %s → %s by %s", h.At.Local().Format("2006-01-02 15:04"), h.Kind, from, h.To, h.Actor)
		if h.Reason != "" {
			line += ": " + Safe(h.Reason)
		}
		fmt.Fprintln(p.Out, line)
	}
}
