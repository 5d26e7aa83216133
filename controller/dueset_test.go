package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/delivery"
	"github.com/agenttree/agenttree/controller/dueset"
	"github.com/agenttree/agenttree/controller/wake"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/filestore"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/stages/load"
)

const dueConfig = `
project: shop
stages:
  - name: work
  - name: review
    human_review: true
  - name: ship
    host: controller
  - name: done
    terminal: completion
`

// dueRig is a rig whose controller keeps what it reads (every file looks
// settled to it), and a second engine over the same files: another
// process, a person's command.
type dueRig struct {
	*rig
	e, other *engine.Engine
	now      time.Time
	woke     wake.Woken
}

func newDueRig(t *testing.T) *dueRig {
	t.Helper()
	r := &dueRig{rig: newRig(t, dueConfig), now: time.Now()}
	r.c.Now = func() time.Time { return r.now }
	r.c.wall = func() time.Time { return time.Now().Add(time.Hour) }
	r.e = r.engine(t)
	r.other = r.otherProcess(t)
	return r
}

// otherProcess opens the rig's config and state directory afresh.
func (r *dueRig) otherProcess(t *testing.T) *engine.Engine {
	t.Helper()
	reg := builtin.Registry()
	cfg, err := load.File(r.e.Config.File, reg)
	require.NoError(t, err)
	store, err := issues.Open(r.e.Store.Root())
	require.NoError(t, err)
	return engine.New(cfg, store, reg, nil)
}

// create makes an issue at stage whose messages are told and whose
// outbox is empty: nothing is due for its mail.
func (r *dueRig) create(t *testing.T, stage string) int {
	t.Helper()
	iss, err := r.e.Create(context.Background(), engine.NewIssue{Title: "x", Stage: stage})
	require.NoError(t, err)
	return iss.ID
}

func (r *dueRig) quiet(t *testing.T, id int) {
	t.Helper()
	iss, err := r.e.Store.Get(id)
	require.NoError(t, err)
	for _, m := range delivery.Channels(r.e.Config, r.e.Messages(iss)) {
		r.c.markQueued(id, m.Key)
	}
	require.NoError(t, os.RemoveAll(r.e.Outbox(id).Dir()))
}

// watched gives issue id an open PR and a poll not due for an hour.
func (r *dueRig) watched(t *testing.T, id int) {
	t.Helper()
	iss, err := r.e.Store.Get(id)
	require.NoError(t, err)
	_, err = r.e.Store.Update(context.Background(), id, iss.Version, func(i *issues.Issue) error {
		i.PRNumber = 7
		return nil
	})
	require.NoError(t, err)
	r.setPoll(t, r.e, id, r.now, time.Hour)
}

func (r *dueRig) setPoll(t *testing.T, e *engine.Engine, id int, polled time.Time, every time.Duration) {
	t.Helper()
	tx, err := e.Store.Lock(context.Background(), id)
	require.NoError(t, err)
	defer tx.Unlock()
	require.NoError(t, tx.SetPoll(&issues.Poll{PR: 7, Stage: "review", PolledAt: polled, IntervalS: int(every / time.Second), NextAt: polled.Add(every)}))
}

// state is what the tick would do with issue id: "" (nothing), "act",
// "mail" or "act+mail".
func (r *dueRig) state(t *testing.T, id int) string {
	t.Helper()
	for _, d := range r.c.due(r.engine(t), r.now, r.woke, func(int) bool { return true }) {
		if d.iss.ID != id {
			continue
		}
		var s []string
		if d.act {
			s = append(s, "act")
		}
		if d.mail {
			s = append(s, "mail")
		}
		return strings.Join(s, "+")
	}
	return ""
}

// What another process writes, a config reload, the clock and the
// forge's watch each change what is due at the next tick, though the
// controller keeps what it read of the issues whose files are as they
// were.
func TestTheDueSetSeesEveryChangeAtTheNextTick(t *testing.T) {
	ctx := context.Background()
	human := engine.Actor{Kind: engine.ActorHuman}
	for _, tt := range []struct {
		name string
		// setup makes the issue looked at; change changes it and says
		// which issue to look at then.
		setup         func(t *testing.T, r *dueRig) int
		change        func(t *testing.T, r *dueRig, id int) int
		before, after string
	}{
		{"a person approves from the CLI",
			func(t *testing.T, r *dueRig) int { return r.create(t, "review") },
			func(t *testing.T, r *dueRig, id int) int {
				_, err := r.other.Approve(ctx, id, human, false)
				require.NoError(t, err)
				return id
			}, "", "act"},
		{"a person resumes an escalated issue",
			func(t *testing.T, r *dueRig) int {
				id := r.create(t, "ship")
				_, err := r.e.Escalate(ctx, id, issues.EscalatedError, "the forge failed")
				require.NoError(t, err)
				return id
			},
			func(t *testing.T, r *dueRig, id int) int {
				_, err := people.Resume(ctx, r.other, id, human, "fixed")
				require.NoError(t, err)
				return id
			}, "", "act+mail"},
		{"watch.yaml is rewritten",
			func(t *testing.T, r *dueRig) int { id := r.create(t, "review"); r.watched(t, id); return id },
			func(t *testing.T, r *dueRig, id int) int {
				r.setPoll(t, r.other, id, r.now.Add(-2*time.Hour), time.Minute)
				return id
			}, "", "act"},
		{"the poll's time comes",
			func(t *testing.T, r *dueRig) int { id := r.create(t, "review"); r.watched(t, id); return id },
			func(t *testing.T, r *dueRig, id int) int { r.now = r.now.Add(2 * time.Hour); return id },
			"", "act"},
		{"the forge's watch names the PR",
			func(t *testing.T, r *dueRig) int { id := r.create(t, "review"); r.watched(t, id); return id },
			func(t *testing.T, r *dueRig, id int) int { r.woke = wake.Woken{PRs: map[int]bool{7: true}}; return id },
			"", "act"},
		{"a message arrives in the outbox",
			func(t *testing.T, r *dueRig) int { return r.create(t, "work") },
			func(t *testing.T, r *dueRig, id int) int {
				_, err := r.other.Outbox(id).Put(ctx, outbox.Message{Key: "note", To: outbox.ToManager, Kind: "note", Text: "hello"})
				require.NoError(t, err)
				return id
			}, "", "mail"},
		{"an issue is created",
			func(t *testing.T, r *dueRig) int { return r.create(t, "work") },
			func(t *testing.T, r *dueRig, _ int) int {
				iss, err := r.other.Create(ctx, engine.NewIssue{Title: "new", Stage: "ship"})
				require.NoError(t, err)
				return iss.ID
			}, "", "act"},
		{"an issue is removed",
			func(t *testing.T, r *dueRig) int { return r.create(t, "ship") },
			func(t *testing.T, r *dueRig, id int) int {
				require.NoError(t, os.RemoveAll(r.e.Store.HostDir(id)))
				require.NoError(t, os.RemoveAll(r.e.Store.Dir(id)))
				return id
			}, "act", ""},
		{"the config is reloaded",
			func(t *testing.T, r *dueRig) int { return r.create(t, "work") },
			func(t *testing.T, r *dueRig, id int) int {
				path := r.e.Config.File
				changed := strings.Replace(dueConfig, "- name: work\n", "- name: work\n    host: controller\n", 1)
				require.NoError(t, os.WriteFile(path, []byte(changed), 0o644))
				future := time.Now().Add(time.Hour)
				require.NoError(t, os.Chtimes(path, future, future))
				return id
			}, "", "act"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newDueRig(t)
			id := tt.setup(t, r)
			r.quiet(t, id)
			require.Equal(t, tt.before, r.state(t, id), "before")
			require.Equal(t, tt.before, r.state(t, id), "before, from what the last tick kept")
			require.NotNil(t, r.c.dueSet().Kept(id), "the due set keeps what it read")
			id = tt.change(t, r, id)
			assert.Equal(t, tt.after, r.state(t, id), "the next tick")
		})
		// With the watch of the issues' files, the issues it does not
		// name are not stat'ed: a change is seen once its notification
		// is read, at the next tick or the one after.
		t.Run(tt.name+", watched", func(t *testing.T) {
			r := newDueRig(t)
			w, err := dueset.WatchIssues(r.e.Store.Layout())
			require.NoError(t, err)
			t.Cleanup(func() { w.Close() })
			r.c.dueSet().Feed = w
			r.c.dueSet().Recheck = 24 * time.Hour // seen by the watch, not the minute's stat
			id := tt.setup(t, r)
			r.quiet(t, id)
			require.Eventually(t, func() bool { return r.state(t, id) == tt.before }, settleWithin, lookEvery, "before")
			require.Equal(t, tt.before, r.state(t, id), "before, from what the last tick kept")
			require.NotNil(t, r.c.dueSet().Kept(id), "the due set keeps what it read")
			id = tt.change(t, r, id)
			require.Eventually(t, func() bool { return r.state(t, id) == tt.after }, settleWithin, lookEvery, "after")
		})
	}
}

// An issue whose files did not change is not read again; one whose
// files changed too recently for their stamps to tell a change within the
// file system's time granularity (scancache.SettleTime) is read at every
// tick until they are settled.
func TestTheDueSetKeepsOnlySettledIssues(t *testing.T) {
	r := newDueRig(t)
	id := r.create(t, "work")
	r.quiet(t, id)
	r.c.wall = time.Now
	r.state(t, id)
	assert.Nil(t, r.c.dueSet().Kept(id), "just written: not kept")

	r.c.wall = func() time.Time { return time.Now().Add(time.Hour) }
	r.state(t, id)
	require.NotNil(t, r.c.dueSet().Kept(id))
	kept := r.c.dueSet().Kept(id).Issue
	r.state(t, id)
	assert.Same(t, kept, r.c.dueSet().Kept(id).Issue, "unchanged: not read again")
	require.NoError(t, os.WriteFile(filepath.Join(r.e.Store.HostDir(id), "watch.yaml"), []byte("{}\n"), 0o644))
	r.state(t, id)
	assert.NotSame(t, kept, r.c.dueSet().Kept(id).Issue, "a file changed: read again")
}

// reads counts the issues read from the store.
type reads struct {
	backend.Backend
	n atomic.Int64
}

// Unwrap says the issues are filestore's files, whose stamps count.
func (r *reads) Unwrap() backend.Backend { return r.Backend }

func (r *reads) Read(ctx context.Context, id int) (backend.Snapshot, error) {
	r.n.Add(1)
	return r.Backend.Read(ctx, id)
}

// A tick with nothing due reads no issue once they are kept, in a
// pipeline whose agents the tick keeps alive as well (roles:).
func TestATickWithNothingDueReadsNoIssue(t *testing.T) {
	const config = `
project: shop
agents:
  claude: {command: claude}
roles:
  developer: {agents: [claude]}
stages:
  - name: work
    role: developer
  - name: done
    terminal: completion
`
	dir := t.TempDir()
	path := filepath.Join(dir, "agenttree.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o644))
	root := filepath.Join(dir, "_agenttree")
	counted := &reads{Backend: filestore.Open(root)}
	c := &Controller{
		Load: func() (*engine.Engine, error) {
			reg := builtin.Registry()
			cfg, err := load.File(path, reg)
			if err != nil {
				return nil, err
			}
			store, err := issues.OpenWith(root, counted)
			if err != nil {
				return nil, err
			}
			return engine.New(cfg, store, reg, nil), nil
		},
		wall: func() time.Time { return time.Now().Add(time.Hour) },
	}
	e, err := c.reload()
	require.NoError(t, err)
	c.Tmux = &tmux.Client{Socket: filepath.Join(t.TempDir(), "no-tmux"), LockDir: e.Store.Root()}
	for range 5 {
		_, err := e.Create(context.Background(), engine.NewIssue{Title: "x", Stage: "work"})
		require.NoError(t, err)
	}
	for range 2 {
		_, err := c.Tick(context.Background())
		require.NoError(t, err)
	}
	counted.n.Store(0)
	for range 3 {
		sum, err := c.Tick(context.Background())
		require.NoError(t, err)
		require.Zero(t, sum.Due)
	}
	assert.Zero(t, counted.n.Load(), "issues read by ticks with nothing due")
}
