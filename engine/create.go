package engine

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/agenttree/agenttree/engine/issues"
)

// NewIssue is what `issue create` asks for.
type NewIssue struct {
	Title  string
	Flow   string
	Stage  string
	Labels []string
	Vars   map[string]any
	// By is who creates it (recorded in the history); a person if unset.
	By Actor
}

// Create validates req against the config and stores a new issue at the
// start of its flow (or at req.Stage).
func (e *Engine) Create(ctx context.Context, req NewIssue) (*issues.Issue, error) {
	title := strings.TrimSpace(req.Title)
	if title == "" {
		return nil, fmt.Errorf("an issue needs a title: `agenttree issue create \"Add login page\"`")
	}
	if i := strings.IndexFunc(title, unprintable); i >= 0 {
		// A title is printed in terminals and typed into agents' panes:
		// a control character or a bidi override there could hide or
		// rewrite what people read.
		return nil, fmt.Errorf("an issue's title is one line of plain text; it has %U at byte %d: remove it", []rune(title[i:])[0], i)
	}
	flow, err := e.Config.Flow(req.Flow)
	if err != nil {
		return nil, err
	}
	stage := flow.Nodes[0].Path
	if req.By.Kind == ActorAgent {
		// The flow and the variables decide which gates an issue meets
		// (a shorter flow, a condition that skips a review): a person's.
		if req.Flow != "" && flow.Name != e.Config.DefaultFlow {
			return nil, fmt.Errorf("agents create issues in the default flow (%s); a person chooses another (--flow %s)", e.Config.DefaultFlow, flow.Name)
		}
		if len(req.Vars) > 0 {
			return nil, fmt.Errorf("agents create issues without variables: they decide which stages an issue meets; a person sets them (--set)")
		}
	}
	if req.Stage != "" && req.Stage != stage && req.By.Kind == ActorAgent {
		// Placing an issue mid-flow would skip gates (a review, say).
		return nil, fmt.Errorf("agents create issues at the start of a flow (%s); a person can place one at %s", stage, req.Stage)
	}
	if req.Stage != "" {
		node, ok := e.Config.Node(req.Stage)
		if !ok || flow.Index(node.Path) < 0 {
			return nil, fmt.Errorf("flow %q has no stage %q (its stages: %s)", flow.Name, req.Stage, strings.Join(flow.Paths(), ", "))
		}
		stage = node.Path
	}
	by := req.By.Kind
	if by == "" {
		by = ActorHuman
	}
	iss := &issues.Issue{Slug: issues.Slugify(title), Title: title, Flow: flow.Name, Stage: stage, Labels: req.Labels, Vars: req.Vars}
	if node, _ := e.Config.Node(stage); node.Controller() && len(node.Entering(nil)) > 0 {
		// Placed at a controller stage: its entry work is the controller's
		// to do, as if the issue had moved there.
		iss.EntryPending = &issues.EntryPending{Stage: stage}
	}
	return e.Store.Create(ctx, iss, string(by))
}

// unprintable reports whether r has no place in a one-line title: control
// characters (newlines and escapes included) and the bidi overrides that
// reorder what a terminal shows.
func unprintable(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}
