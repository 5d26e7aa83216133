package controller

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bounds of the waits for a file notification to be read.
const (
	settleWithin = 30 * time.Second
	lookEvery    = 20 * time.Millisecond
)

// scripted is a feed that names what the test tells it to.
type scripted struct {
	mu  sync.Mutex
	ids []int
	all bool
}

func (f *scripted) tell(ids []int, all bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids, f.all = append(f.ids, ids...), f.all || all
}

func (f *scripted) Take() ([]int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids, all := f.ids, f.all
	f.ids, f.all = nil, false
	return ids, all
}

// With a feed, what a tick kept of an issue the feed does not name is
// used without a stat, so a change the feed did not tell goes unseen
// until the feed names the issue, says it lost changes, or the Recheck
// comes, when every issue is stat'ed again.
func TestWithAFeedOnlyTheIssuesItNamesAreLookedAt(t *testing.T) {
	r := newDueRig(t)
	id := r.create(t, "work")
	r.quiet(t, id)
	feed := &scripted{}
	r.c.dueSet().Feed = feed
	wall := time.Now().Add(time.Hour)
	r.c.wall = func() time.Time { return wall }
	watch := filepath.Join(r.e.Store.HostDir(id), "watch.yaml")
	untold := func() { require.NoError(t, os.WriteFile(watch, []byte("{}\n"), 0o644)) }
	kept := func() any {
		r.state(t, id)
		require.NotNil(t, r.c.dueSet().Kept(id))
		return r.c.dueSet().Kept(id).Issue
	}

	first := kept()
	untold()
	assert.Same(t, first, kept(), "not named: used without a stat")

	feed.tell([]int{id}, false)
	second := kept()
	assert.NotSame(t, first, second, "named: stat'ed, changed, read again")
	assert.Same(t, second, kept(), "named once: its mark is gone")

	untold()
	feed.tell(nil, true)
	third := kept()
	assert.NotSame(t, second, third, "the feed lost changes: every issue stat'ed")

	untold()
	assert.Same(t, third, kept())
	wall = wall.Add(time.Minute)
	assert.NotSame(t, third, kept(), "a minute on: every issue stat'ed again")
}

// broken is a feed that broke: it says so, and that every issue may have
// changed.
type broken struct{}

func (broken) Take() ([]int, bool) { return nil, true }
func (broken) Err() error          { return errors.New("no space left for inotify watches") }

// A watch that broke is said once in the controller's log, not at every
// tick.
func TestABrokenWatchIsSaidOnce(t *testing.T) {
	r := newDueRig(t)
	id := r.create(t, "work")
	r.quiet(t, id)
	var log bytes.Buffer
	r.c.dues = nil
	r.c.Log = slog.New(slog.NewTextHandler(&log, nil))
	r.c.dueSet().Feed = broken{}
	for range 3 {
		r.state(t, id)
	}
	assert.Equal(t, 1, strings.Count(log.String(), "the watch of the issues' files broke"), log.String())
	assert.Contains(t, log.String(), "no space left for inotify watches")
}
