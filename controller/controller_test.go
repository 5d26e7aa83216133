package controller

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// rig is a repository directory with a config, and a controller over it.
type rig struct {
	dir string
	c   *Controller
}

func newRig(t testing.TB, config string) *rig {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(config), 0o644))
	r := &rig{dir: dir}
	r.c = &Controller{Load: func() (*engine.Engine, error) {
		reg := builtin.Registry()
		cfg, err := load.File(path, reg)
		if err != nil {
			return nil, err
		}
		store, err := issues.Open(filepath.Join(dir, "_agenttree"))
		if err != nil {
			return nil, err
		}
		return engine.New(cfg, store, reg, nil), nil
	}}
	return r
}

func (r *rig) engine(t testing.TB) *engine.Engine {
	t.Helper()
	e, err := r.c.reload()
	require.NoError(t, err)
	return e
}

const escalating = `
project: shop
notify:
  command: 'cat > "$AGENTTREE_ISSUE_DIR/../../event.json"; printf "%s|%s\n" "$AGENTTREE_EVENT" {{issue_title}} >> "$AGENTTREE_ISSUE_DIR/../../events.txt"'
stages:
  - name: work
  - name: done
    terminal: completion
`

func TestPeopleAreToldByNotifyCommandOnceWithValuesNeverCode(t *testing.T) {
	r := newRig(t, escalating)
	e := r.engine(t)
	iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Fix $(touch pwned) `touch pwned2`; rm -rf x", Stage: "work"})
	require.NoError(t, err)
	_, err = e.Escalate(context.Background(), iss.ID, "error", "the forge failed 5 times")
	require.NoError(t, err)

	for range 3 {
		_, err := r.c.Tick(context.Background())
		require.NoError(t, err)
	}
	events, err := os.ReadFile(filepath.Join(r.dir, "_agenttree", "events.txt"))
	require.NoError(t, err)
	assert.Equal(t, "escalation|Fix $(touch pwned) `touch pwned2`; rm -rf x\n", string(events), "told once, the title as a value")
	for _, f := range []string{"pwned", "pwned2"} {
		_, err := os.Stat(filepath.Join(r.dir, f))
		assert.ErrorIs(t, err, os.ErrNotExist, "nothing in a title runs")
	}
	var ev map[string]any
	data, err := os.ReadFile(filepath.Join(r.dir, "_agenttree", "event.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &ev))
	assert.Equal(t, "escalation", ev["event"])
	assert.Equal(t, float64(iss.ID), ev["issue"])
	assert.Contains(t, ev["message"], "the forge failed 5 times")
	assert.Contains(t, ev["message"], "agenttree resume")
}

func TestAnInvalidConfigIsReportedAndTheLastGoodOneKept(t *testing.T) {
	r := newRig(t, escalating)
	first := r.engine(t)
	path := first.Config.File
	// A stamp in the past, so the edit below is seen as a change.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
	r.c.cfgStamp = old

	require.NoError(t, os.WriteFile(path, []byte("stages: [oops"), 0o644))
	e, err := r.c.reload()
	require.NoError(t, err)
	assert.Same(t, first, e, "the old config stays")

	valid := strings.Replace(escalating, "- name: work", "- name: work\n  - name: review", 1)
	require.NoError(t, os.WriteFile(path, []byte(valid), 0o644))
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(path, future, future))
	e, err = r.c.reload()
	require.NoError(t, err)
	assert.NotSame(t, first, e, "a valid new config takes effect")
	_, ok := e.Config.Node("review")
	assert.True(t, ok)
}

func TestASecondControllerIsRefusedNamingTheFirst(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	require.NoError(t, err)
	defer unlock()
	_, err = Lock(dir)
	require.ErrorIs(t, err, ErrRunning)
	assert.Regexp(t, `pid \d+`, err.Error())
}
