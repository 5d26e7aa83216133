// Package nodes says where each issue's agent runs when the hosts that
// run agents share the state in etcd (`state.nodes`; docs/ARCHITECTURE.md
// §8, "Nodes"): the nodes alive, each named under a lease of its own, and
// the node each issue was given.
//
// A node is alive while its lease lasts: killed or cut off, it is gone
// from Live within the lease. An issue's node outlives it: a person
// moves the issue (`agenttree assign`), never the controller, since the
// node may be cut off with its agent still working.
package nodes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"time"

	"github.com/agenttree/agenttree/stages"
)

// DefaultTTL is a node's lease: a node killed is seen gone within it.
const DefaultTTL = 10 * time.Second

// LabelPrefix is the label that gives an issue to the node it names
// (`node:NAME`), whatever the others' room.
const LabelPrefix = stages.NodeLabel

// ErrTaken is a node's name that a node alive already has.
var ErrTaken = errors.New("a node of that name is alive")

// ErrMoved is an assignment that changed since it was read.
var ErrMoved = errors.New("the issue's node changed meanwhile")

// Node is one host's `agenttree node`, as it
// said when it joined.
type Node struct {
	Name string `json:"name"`
	// Host is the machine and process, for people.
	Host string `json:"host"`
	// Labels: the node takes only issues carrying one of them; none,
	// any issue.
	Labels []string `json:"labels,omitempty"`
	// Capacity is how many unfinished issues it takes.
	Capacity int       `json:"capacity"`
	Since    time.Time `json:"since"`
}

// Registry is where the nodes and the issues' nodes are kept
// (controller/nodes/etcdnodes, in the state's etcd cluster).
type Registry interface {
	// Live lists the nodes alive, by name.
	Live(ctx context.Context) ([]Node, error)
	// Assigned is every issue's node, by id.
	Assigned(ctx context.Context) (map[int]string, error)
	// Assign gives issue id to node name if its node is still from ("":
	// none), else ErrMoved: two controllers, or a person and the
	// controller, never both move it.
	Assign(ctx context.Context, id int, name, from string) error
}

// Homes is which node each issue's agent is on, as a tick read it.
type Homes struct {
	// Self is this process's node; "" for a controller that runs no
	// agents.
	Self     string
	Assigned map[int]string
}

// Mine reports whether issue id's agent is this process's.
func (h Homes) Mine(id int) bool { return h.Self != "" && h.Assigned[id] == h.Self }

// Elsewhere reports whether issue id was given to a node other than this
// one.
func (h Homes) Elsewhere(id int) bool {
	n, ok := h.Assigned[id]
	return ok && n != h.Self
}

// ValidName reports what is wrong with a node's name, nil when nothing:
// it is a key's last part and a label's.
func ValidName(name string) error {
	if name == "" || len(name) > 63 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
		return fmt.Errorf("bad node name %q: use 1 to 63 letters, digits, `-`, `_` or `.`", name)
	}
	return nil
}

// Want is an issue without a node.
type Want struct {
	ID     int
	Labels []string
}

// Place gives each issue of wants, in order, a node of live: the one its
// `node:NAME` label names, else among the nodes whose labels it carries
// one of (a node without labels takes any), the one with the most room
// left (its capacity less load, the unfinished issues it has), the first
// by name on a tie. An issue whose node is not alive, or for which every
// node is full, is not placed: it waits for one.
func Place(wants []Want, live []Node, load map[string]int) map[int]string {
	room := make(map[string]int, len(live))
	for _, n := range live {
		room[n.Name] = n.Capacity - load[n.Name]
	}
	byName := slices.Clone(live)
	slices.SortFunc(byName, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
	out := map[int]string{}
	for _, w := range wants {
		best := ""
		if named := namedNode(w.Labels); named != "" {
			if room[named] > 0 {
				best = named
			}
		} else {
			for _, n := range byName {
				if room[n.Name] > 0 && takes(n, w.Labels) && (best == "" || room[n.Name] > room[best]) {
					best = n.Name
				}
			}
		}
		if best != "" {
			out[w.ID] = best
			room[best]--
		}
	}
	return out
}

// namedNode is the node an issue's `node:NAME` label names, "" when none.
func namedNode(labels []string) string {
	for _, l := range labels {
		if name, ok := strings.CutPrefix(l, LabelPrefix); ok {
			return name
		}
	}
	return ""
}

// takes reports whether node n takes an issue with labels.
func takes(n Node, labels []string) bool {
	if len(n.Labels) == 0 {
		return true
	}
	for _, l := range n.Labels {
		if slices.Contains(labels, l) {
			return true
		}
	}
	return false
}
