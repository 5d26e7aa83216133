package transfer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/etcdstore"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/engine/issues/filestore"
	"github.com/agenttree/agenttree/engine/issues/transfer"
)

// filesRepo is a state directory of five issues in files at several
// stages, with histories, a watch.yaml and a record set aside by a
// repair.
func filesRepo(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "_agenttree")
	s, err := issues.Open(root)
	require.NoError(t, err)
	stages := [][]string{{"backlog"}, {"plan", "implement.code", "implement.feedback"}, {"plan", "pr_ready"}, {"plan"}, {"plan", "implement.code", "accepted"}}
	for i, path := range stages {
		iss, err := s.Create(ctx, &issues.Issue{Title: fmt.Sprintf("Issue %d", i+1), Slug: fmt.Sprintf("issue-%d", i+1), Flow: "default", Stage: path[0]}, "human")
		require.NoError(t, err)
		for _, stage := range path[1:] {
			iss, err = s.Update(ctx, iss.ID, iss.Version, func(cur *issues.Issue) error { cur.Stage = stage; return nil })
			require.NoError(t, err)
		}
	}
	tx, err := s.Lock(ctx, 3)
	require.NoError(t, err)
	require.NoError(t, tx.SetPoll(&issues.Poll{PR: 7, Head: "abc", Status: "CI running", NextAt: time.Now().UTC().Truncate(time.Second)}))
	tx.Unlock()
	// A line no write made, which repair sets aside.
	f, err := os.OpenFile(filepath.Join(s.HostDir(4), eventlog.File), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"prev":"forged","hash":"0000000000000000000000000000000000000000000000000000000000000000"}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	done, err := s.Repair(ctx, 4, false)
	require.NoError(t, err)
	require.Equal(t, 1, done.SetAsideLines)
	return root
}

// etcdAt is an etcd backend under prefix of one embedded member.
func etcdAt(t *testing.T, c *etcdtest.Cluster, prefix string) *etcdstore.Store {
	s := etcdstore.New(c.Client(t), prefix)
	t.Cleanup(func() { s.Close() })
	return s
}

// requireSame checks that a and b hold every issue byte for byte, and
// the same last id.
func requireSame(t *testing.T, a, b backend.Porter) {
	t.Helper()
	ctx := context.Background()
	ids, err := a.IDs(ctx)
	require.NoError(t, err)
	idsB, err := b.IDs(ctx)
	require.NoError(t, err)
	require.Equal(t, ids, idsB)
	for _, id := range ids {
		wa, err := a.Export(ctx, id)
		require.NoError(t, err)
		wb, err := b.Export(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, string(wa.State), string(wb.State), "issue %d's state", id)
		assert.Equal(t, string(wa.Log), string(wb.Log), "issue %d's log", id)
		assert.Equal(t, wa.Watch, wb.Watch, "issue %d's watch", id)
		assert.Equal(t, wa.Aside, wb.Aside, "issue %d's records set aside", id)
	}
	la, err := a.LastID(ctx)
	require.NoError(t, err)
	lb, err := b.LastID(ctx)
	require.NoError(t, err)
	assert.Equal(t, la, lb)
}

func actions(res *transfer.Result) map[transfer.Action]int {
	out := map[transfer.Action]int{}
	for _, m := range res.Issues {
		out[m.Action]++
	}
	return out
}

// Files to etcd and back to files, each side checked as verify checks
// it: every byte of every issue the same, the records set aside and the
// last id too. Moved back onto the files it came from, nothing changes.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	root := filesRepo(t)
	files := filestore.Open(root)
	etcd := etcdAt(t, etcdtest.Start(t), "/rt")

	res, err := transfer.Run(ctx, transfer.Options{From: files, To: etcd, Root: root})
	require.NoError(t, err)
	assert.True(t, res.OK, "%+v", res.Verified)
	assert.Equal(t, map[transfer.Action]int{transfer.Copied: 5}, actions(res))
	assert.Equal(t, 5, res.LastID)
	requireSame(t, files, etcd)
	aside, err := etcd.Export(ctx, 4)
	require.NoError(t, err)
	assert.Contains(t, string(aside.Aside[eventlog.SetAsideFile]), `"prev":"forged"`)

	back := filepath.Join(t.TempDir(), "_agenttree")
	res, err = transfer.Run(ctx, transfer.Options{From: etcd, To: filestore.Open(back), Root: back})
	require.NoError(t, err)
	assert.True(t, res.OK, "%+v", res.Verified)
	requireSame(t, files, filestore.Open(back))
	for _, rep := range res.Verified {
		assert.True(t, rep.OK, "issue %d: %v", rep.ID, rep.Problems)
	}
	st, err := issues.Open(back)
	require.NoError(t, err)
	iss, err := st.Get(2)
	require.NoError(t, err)
	assert.Equal(t, "implement.feedback", iss.Stage)
	assert.Equal(t, 3, iss.Version)

	res, err = transfer.Run(ctx, transfer.Options{From: etcd, To: files, Root: root})
	require.NoError(t, err)
	assert.True(t, res.OK)
	assert.Equal(t, map[transfer.Action]int{transfer.Same: 5}, actions(res), "the files it came from are the same")
}

// A destination holding issues that are not copies of the source's is
// refused before anything is written; one holding the start of the
// source's issues (written before the source went on) is brought up.
func TestDestinationNotEmpty(t *testing.T) {
	ctx := context.Background()
	c := etcdtest.Start(t)
	tests := []struct {
		name string
		// prepare writes the destination, and the source after it
		prepare func(t *testing.T, src *issues.Store, dst *etcdstore.Store)
		refused string
		want    map[transfer.Action]int
	}{
		{"an issue made there", func(t *testing.T, _ *issues.Store, dst *etcdstore.Store) {
			st, err := issues.OpenWith(t.TempDir(), dst)
			require.NoError(t, err)
			for range 6 {
				_, err = st.Create(ctx, &issues.Issue{Title: "Elsewhere", Slug: "elsewhere", Flow: "default", Stage: "plan"}, "human")
				require.NoError(t, err)
			}
		}, "issue 6: the source has no such issue", nil},
		{"an issue changed there", func(t *testing.T, src *issues.Store, dst *etcdstore.Store) {
			_, err := transfer.Run(ctx, transfer.Options{From: filestore.Open(src.Root()), To: dst, Root: src.Root()})
			require.NoError(t, err)
			there, err := issues.OpenWith(src.Root(), dst)
			require.NoError(t, err)
			_, err = there.Update(ctx, 2, 3, func(cur *issues.Issue) error { cur.Stage = "accepted"; return nil })
			require.NoError(t, err)
			_, err = src.Update(ctx, 2, 3, func(cur *issues.Issue) error { cur.Stage = "not_doing"; return nil })
			require.NoError(t, err)
		}, "issue 2: its log is not the start of the source's", nil},
		{"the source went on", func(t *testing.T, src *issues.Store, dst *etcdstore.Store) {
			_, err := transfer.Run(ctx, transfer.Options{From: filestore.Open(src.Root()), To: dst, Root: src.Root()})
			require.NoError(t, err)
			_, err = src.Update(ctx, 2, 3, func(cur *issues.Issue) error { cur.Stage = "accepted"; return nil })
			require.NoError(t, err)
			_, err = src.Create(ctx, &issues.Issue{Title: "Later", Slug: "later", Flow: "default", Stage: "plan"}, "human")
			require.NoError(t, err)
		}, "", map[transfer.Action]int{transfer.Same: 4, transfer.CaughtUp: 1, transfer.Copied: 1}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filesRepo(t)
			src, err := issues.Open(root)
			require.NoError(t, err)
			dst := etcdAt(t, c, fmt.Sprintf("/dst-%d", i))
			tt.prepare(t, src, dst)
			before := map[int]backend.Whole{}
			ids, err := dst.IDs(ctx)
			require.NoError(t, err)
			for _, id := range ids {
				before[id], err = dst.Export(ctx, id)
				require.NoError(t, err)
			}

			res, err := transfer.Run(ctx, transfer.Options{From: filestore.Open(root), To: dst, Root: root})
			if tt.refused != "" {
				var ce *transfer.ConflictError
				require.ErrorAs(t, err, &ce)
				assert.ErrorContains(t, err, tt.refused)
				for id, w := range before {
					got, err := dst.Export(ctx, id)
					require.NoError(t, err)
					assert.Equal(t, w, got, "issue %d unchanged", id)
				}
				after, err := dst.IDs(ctx)
				require.NoError(t, err)
				assert.Equal(t, ids, after, "nothing written")
				return
			}
			require.NoError(t, err)
			assert.True(t, res.OK)
			assert.Equal(t, tt.want, actions(res))
			requireSame(t, filestore.Open(root), dst)
		})
	}
}

// stopAfter is a destination whose transfer is stopped (its context
// cancelled) once n issues were written: a migrate killed halfway.
type stopAfter struct {
	backend.Porter
	n      int
	cancel context.CancelFunc
}

func (s *stopAfter) Import(ctx context.Context, w backend.Whole, timeout time.Duration) error {
	err := s.Porter.Import(ctx, w, timeout)
	if s.n--; s.n == 0 {
		s.cancel()
	}
	return err
}

// A transfer stopped halfway, or one whose last issue was cut short
// after its log (a log without a state), is run again to the end.
func TestStoppedHalfwayAndRunAgain(t *testing.T) {
	root := filesRepo(t)
	files := filestore.Open(root)
	etcd := etcdAt(t, etcdtest.Start(t), "/halfway")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := transfer.Run(ctx, transfer.Options{From: files, To: &stopAfter{Porter: etcd, n: 2, cancel: cancel}, Root: root})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "stopped after 2 issue(s)")
	ids, err := etcd.IDs(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, ids)
	// Issue 3 cut short after its log's first line.
	w, err := files.Export(context.Background(), 3)
	require.NoError(t, err)
	w.State, w.Watch, w.Log = nil, nil, w.Log[:len(firstLine(w.Log))]
	require.NoError(t, etcd.Import(context.Background(), w, time.Minute))

	res, err := transfer.Run(context.Background(), transfer.Options{From: files, To: etcd, Root: root})
	require.NoError(t, err)
	assert.True(t, res.OK)
	assert.Equal(t, map[transfer.Action]int{transfer.Same: 2, transfer.CaughtUp: 1, transfer.Copied: 2}, actions(res))
	requireSame(t, files, etcd)
}

func firstLine(log []byte) []byte {
	for i, b := range log {
		if b == '\n' {
			return log[:i+1]
		}
	}
	return log
}
