// Package intake creates issues: it checks a new issue against the
// config (its title, its flow and stage, what an agent may choose) and
// stores it at the start of its flow, or where a person places it.
package intake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/stages"
)

// NewIssue is what `issue create` asks for.
type NewIssue struct {
	Title  string
	Flow   string
	Stage  string
	Labels []string
	Vars   map[string]any
	// By is who creates it (recorded in the history); a person if unset.
	By act.Actor
}

// Create validates req against the config and stores a new issue at the
// start of its flow (or at req.Stage).
func Create(ctx context.Context, cfg *stages.Config, store *issues.Store, req NewIssue) (*issues.Issue, error) {
	title := strings.TrimSpace(req.Title)
	if err := checkTitle(title); err != nil {
		return nil, err
	}
	flow, err := cfg.Flow(req.Flow)
	if err != nil {
		return nil, err
	}
	stage := flow.Nodes[0].Path
	if req.By.Kind == act.ActorAgent {
		if err := agentMayCreate(cfg, flow.Name, req.Vars); err != nil {
			return nil, err
		}
		for _, l := range req.Labels {
			if strings.HasPrefix(l, stages.NodeLabel) {
				return nil, fmt.Errorf("label %q names the node the issue runs on, which a person chooses: leave it out (a person may add it, or `agenttree assign` the issue)", l)
			}
		}
	}
	if req.Stage != "" && req.Stage != stage && req.By.Kind == act.ActorAgent {
		// Placing an issue mid-flow would skip gates (a review, say).
		return nil, fmt.Errorf("agents create issues at the start of a flow (%s); a person can place one at %s", stage, req.Stage)
	}
	if req.Stage != "" {
		node, ok := cfg.Node(req.Stage)
		if !ok || flow.Index(node.Path) < 0 {
			return nil, fmt.Errorf("flow %q has no stage %q (its stages: %s)", flow.Name, req.Stage, strings.Join(flow.Paths(), ", "))
		}
		stage = node.Path
	}
	by := req.By.Kind
	if by == "" {
		by = act.ActorHuman
	}
	iss := &issues.Issue{Slug: issues.Slugify(title), Title: title, Flow: flow.Name, Stage: stage, Labels: req.Labels, Vars: req.Vars}
	if node, _ := cfg.Node(stage); node.Controller() && len(node.Entering(nil)) > 0 {
		// Placed at a controller stage: its entry work is the controller's
		// to do, as if the issue had moved there.
		iss.EntryPending = &issues.EntryPending{Stage: stage}
	}
	return store.Create(ctx, iss, string(by))
}

// agentMayCreate says whether an agent may create an issue in flow with
// vars: the flow and the variables decide which gates an issue meets (a
// shorter flow, a condition that skips a review), so only what the
// config's agent_create allows (default: the default flow, no variables).
func agentMayCreate(cfg *stages.Config, flow string, vars map[string]any) error {
	allowed := cfg.AgentCreate.Flows
	if len(allowed) == 0 {
		allowed = []string{cfg.DefaultFlow}
	}
	if !slices.Contains(allowed, flow) {
		return fmt.Errorf("agents create issues in flow %s; %s is a person's to choose (--flow %s), or the config's to allow (agent_create.flows)",
			strings.Join(allowed, ", "), flow, flow)
	}
	for name := range vars {
		if !slices.Contains(cfg.AgentCreate.Vars, name) {
			return fmt.Errorf("agents may not set %s: variables decide which stages an issue meets; a person sets it (--set), or the config allows it (agent_create.vars)", name)
		}
	}
	return nil
}

// MaxTitleLen is the longest title, in characters (runes), an issue may
// have: a title names the issue in one line of a table or a message; what
// the issue is about goes in its documents.
const MaxTitleLen = 200

// checkTitle refuses a title a person could not read safely in one line.
func checkTitle(title string) error {
	if title == "" {
		return errors.New("an issue needs a title: `agenttree issue create \"Add login page\"`")
	}
	if i := strings.IndexFunc(title, textsafe.Unprintable); i >= 0 {
		// A title is printed in terminals and typed into agents' panes:
		// a control character or a bidi override there could hide or
		// rewrite what people read.
		return fmt.Errorf("an issue's title is one line of plain text; it has %U at byte %d: remove it", []rune(title[i:])[0], i)
	}
	if n := utf8.RuneCountInString(title); n > MaxTitleLen {
		return fmt.Errorf("an issue's title is at most %d characters; this one has %d: give it a short title and put the details in the issue's documents (in its directory under _agenttree/issues/, once created)", MaxTitleLen, n)
	}
	return nil
}
