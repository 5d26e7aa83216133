package nodes

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/internal/textsafe"
)

// Survey is where the unfinished issues are: on each node alive, on
// nodes gone, or waiting for a node.
type Survey struct {
	Live []Node
	// Load is each node's unfinished issues, alive or gone.
	Load map[string][]int
	// Gone are the nodes not alive that hold unfinished issues, by name.
	Gone []string
	// Waiting are the unfinished issues without a node.
	Waiting []int
}

// Look is the survey of the unfinished issues, in id order, given the
// nodes alive and every issue's node.
func Look(unfinished []int, live []Node, assigned map[int]string) Survey {
	s := Survey{Live: live, Load: map[string][]int{}}
	for _, id := range unfinished {
		if node, ok := assigned[id]; ok {
			s.Load[node] = append(s.Load[node], id)
		} else {
			s.Waiting = append(s.Waiting, id)
		}
	}
	alive := map[string]bool{}
	for _, n := range live {
		alive[n.Name] = true
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
	if len(s.Waiting) > 0 {
		out = append(out, fmt.Sprintf("issues %s wait for a node with room", JoinIDs(s.Waiting)))
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
