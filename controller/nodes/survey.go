package nodes

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/stages"
)

// Open is an issue not finished.
type Open struct {
	ID     int
	Labels []string
	// WantsNode: it is at an agent's stage (WantsNode), and waits for a
	// node if it has none.
	WantsNode bool
}

// Finished reports whether an issue at stage is at a stage that ends it:
// its node keeps nothing running for it.
func Finished(cfg *stages.Config, stage string) bool {
	n, ok := cfg.Node(stage)
	return ok && n.Terminal() != stages.TerminalNone
}

// WantsNode reports whether an issue at stage needs a node: an agent
// works there, and it is not escalated. An issue keeps its node once
// given, wherever it goes.
func WantsNode(cfg *stages.Config, stage string, escalated bool) bool {
	n, ok := cfg.Node(stage)
	return ok && !escalated && n.AgentWorks() && n.Role().Agent()
}

// Survey is where the open issues are: on each node alive, on nodes
// gone, or waiting for a node.
type Survey struct {
	Live []Node
	// Load is each node's open issues, alive or gone.
	Load map[string][]int
	// Gone are the nodes not alive that hold open issues, by name.
	Gone []string
	// Waiting are the issues that want a node and have none.
	Waiting []int
	// Named are the waiting issues whose `node:NAME` label names a node
	// not alive, with that name.
	Named map[int]string
}

// Look is the survey of the open issues, in id order, given the nodes
// alive and every issue's node.
func Look(open []Open, live []Node, assigned map[int]string) Survey {
	s := Survey{Live: live, Load: map[string][]int{}, Named: map[int]string{}}
	alive := map[string]bool{}
	for _, n := range live {
		alive[n.Name] = true
	}
	for _, o := range open {
		node, ok := assigned[o.ID]
		switch {
		case ok:
			s.Load[node] = append(s.Load[node], o.ID)
		case !o.WantsNode:
		default:
			s.Waiting = append(s.Waiting, o.ID)
			if named := namedNode(o.Labels); named != "" && !alive[named] {
				s.Named[o.ID] = named
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Load)) {
		if !alive[name] {
			s.Gone = append(s.Gone, name)
		}
	}
	return s
}

// Lines are the survey in words, for `agenttree status`: names from the
// cluster are shown as data.
func (s Survey) Lines() []string {
	parts := make([]string, 0, len(s.Live))
	for _, n := range s.Live {
		parts = append(parts, fmt.Sprintf("%s (%d of %d)", textsafe.Line(n.Name, 64), len(s.Load[n.Name]), n.Capacity))
	}
	if len(parts) == 0 {
		parts = append(parts, "none alive: start `agenttree node` on the hosts that run agents")
	}
	out := []string{"nodes: " + strings.Join(parts, ", ")}
	for _, name := range s.Gone {
		out = append(out, fmt.Sprintf("node %s is gone: its issues %s wait; move each with `agenttree assign ID --node NAME`", textsafe.Line(name, 64), JoinIDs(s.Load[name])))
	}
	var room []int
	for _, id := range s.Waiting {
		if named, ok := s.Named[id]; ok {
			out = append(out, fmt.Sprintf("issue %d waits for node %s, which is not alive: start `agenttree node --name %s` on its host, or `agenttree assign %d --node NAME`",
				id, textsafe.Line(named, 64), textsafe.Line(named, 64), id))
		} else {
			room = append(room, id)
		}
	}
	if len(room) > 0 {
		out = append(out, fmt.Sprintf("issues %s wait for a node with room that takes their labels", JoinIDs(room)))
	}
	return out
}

// JoinIDs is "3, 7, 12".
func JoinIDs(ids []int) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return strings.Join(out, ", ")
}
