package nodes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
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

func client(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

const prefix = "/agenttree/test/nodes"

// A node joins under its name while its lease lasts: a second of the
// same name is refused, saying who has it; one that leaves is gone at
// once, one whose process is gone (its client closed) within the lease.
func TestANodeIsAliveWhileItsLeaseLasts(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	r := nodes.New(client(t, c.Endpoint), prefix)
	m, err := r.Join(ctx, nodes.Node{Name: "a", Host: "host-a 1", Capacity: 2, Since: time.Now()}, 2*time.Second)
	require.NoError(t, err)

	_, err = nodes.New(client(t, c.Endpoint), prefix).Join(ctx, nodes.Node{Name: "a", Host: "host-b 2"}, 2*time.Second)
	require.ErrorIs(t, err, nodes.ErrTaken)
	assert.Contains(t, err.Error(), "host-a 1")

	live, err := r.Live(ctx)
	require.NoError(t, err)
	require.Len(t, live, 1)
	assert.Equal(t, "host-a 1", live[0].Host)

	m.Leave()
	live, err = r.Live(ctx)
	require.NoError(t, err)
	assert.Empty(t, live, "a node that leaves is gone at once")

	other := client(t, c.Endpoint)
	_, err = nodes.New(other, prefix).Join(ctx, nodes.Node{Name: "b", Capacity: 1}, 2*time.Second)
	require.NoError(t, err)
	other.Close() // as a process killed: no more renewals
	require.Eventually(t, func() bool {
		live, err := r.Live(ctx)
		return err == nil && len(live) == 0
	}, 20*time.Second, 100*time.Millisecond, "a node killed is gone within its lease")
}

// An issue is given to a node once: a second giving (another controller,
// a person) from the same start is refused, one from what it is now is
// made.
func TestAnIssueIsGivenOnce(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	r := nodes.New(client(t, c.Endpoint), prefix)
	require.NoError(t, r.Assign(ctx, 7, "a", ""))
	require.ErrorIs(t, r.Assign(ctx, 7, "b", ""), nodes.ErrMoved)
	require.ErrorIs(t, r.Assign(ctx, 7, "b", "c"), nodes.ErrMoved)
	require.NoError(t, r.Assign(ctx, 7, "b", "a"))
	require.NoError(t, r.Assign(ctx, 12, "a", ""))
	got, err := r.Assigned(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[int]string{7: "b", 12: "a"}, got)
}
