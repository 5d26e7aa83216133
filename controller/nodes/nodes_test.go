package nodes_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/controller/nodes"
)

func TestPlace(t *testing.T) {
	a := nodes.Node{Name: "a", Capacity: 2}
	b := nodes.Node{Name: "b", Capacity: 3}
	gpu := nodes.Node{Name: "gpu", Labels: []string{"gpu"}, Capacity: 5}
	tests := []struct {
		name  string
		wants []nodes.Want
		live  []nodes.Node
		load  map[string]int
		want  map[int]string
	}{
		{"the most room first, then by name on a tie", []nodes.Want{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}}, []nodes.Node{b, a}, nil,
			map[int]string{1: "b", 2: "a", 3: "b", 4: "a"}},
		{"the load counts", []nodes.Want{{ID: 1}, {ID: 2}}, []nodes.Node{a, b}, map[string]int{"b": 3},
			map[int]string{1: "a", 2: "a"}},
		{"every node full: the issue waits", []nodes.Want{{ID: 1}, {ID: 2}, {ID: 3}}, []nodes.Node{a}, nil,
			map[int]string{1: "a", 2: "a"}},
		{"a node with labels takes only issues carrying one", []nodes.Want{{ID: 1}, {ID: 2, Labels: []string{"gpu"}}}, []nodes.Node{gpu}, nil,
			map[int]string{2: "gpu"}},
		{"a node without labels takes any", []nodes.Want{{ID: 1, Labels: []string{"gpu"}}}, []nodes.Node{a}, nil,
			map[int]string{1: "a"}},
		{"node:NAME names its node", []nodes.Want{{ID: 1, Labels: []string{"node:a"}}}, []nodes.Node{a, b, gpu}, nil,
			map[int]string{1: "a"}},
		{"node:NAME of a node gone, or full, waits", []nodes.Want{{ID: 1, Labels: []string{"node:c"}}, {ID: 2, Labels: []string{"node:a"}}}, []nodes.Node{a, b}, map[string]int{"a": 2},
			map[int]string{}},
		{"no node alive", []nodes.Want{{ID: 1}}, nil, nil, map[int]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, nodes.Place(tt.wants, tt.live, tt.load))
		})
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"a", "host-1.example_2"} {
		assert.NoError(t, nodes.ValidName(ok), ok)
	}
	for _, bad := range []string{"", "a/b", "two words", "ä", string(make([]byte, 64))} {
		assert.Error(t, nodes.ValidName(bad), bad)
	}
}

func TestLook(t *testing.T) {
	live := []nodes.Node{{Name: "a", Capacity: 2}, {Name: "b", Capacity: 1}}
	open := []nodes.Open{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5, WantsNode: true}, {ID: 6, WantsNode: true, Labels: []string{"node:c"}},
		{ID: 7}, {ID: 8, WantsNode: true, Labels: []string{"node:a"}}}
	s := nodes.Look(open, live, map[int]string{1: "a", 2: "c", 3: "c", 4: "a", 9: "b"})
	assert.Equal(t, []string{"c"}, s.Gone)
	assert.Equal(t, []int{5, 6, 8}, s.Waiting, "issue 7 wants no node (in a parking lot, at a review)")
	assert.Equal(t, map[int]string{6: "c"}, s.Named)
	assert.Equal(t, []string{
		"nodes: a (2 of 2), b (0 of 1)",
		"node c is gone: its issues 2, 3 wait; move each with `agenttree assign ID --node NAME`",
		"issue 6 waits for node c, which is not alive: start `agenttree node --name c` on its host, or `agenttree assign 6 --node NAME`",
		"issues 5, 8 wait for a node with room that takes their labels",
	}, s.Lines())
	assert.Equal(t, []string{"nodes: none alive: start `agenttree node` on the hosts that run agents"}, nodes.Look(nil, nil, nil).Lines())
}

func TestHomes(t *testing.T) {
	h := nodes.Homes{Self: "a", Assigned: map[int]string{1: "a", 2: "b"}}
	assert.True(t, h.Mine(1))
	assert.False(t, h.Mine(2))
	assert.False(t, h.Mine(3), "an issue without a node is no one's")
	assert.False(t, h.Elsewhere(1))
	assert.True(t, h.Elsewhere(2))
	assert.False(t, h.Elsewhere(3), "an issue without a node was not moved away")
	ctl := nodes.Homes{Assigned: h.Assigned}
	assert.False(t, ctl.Mine(1), "a controller without a node keeps no agent")
}
