package api_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

const twoStages = `
project: shop
stages:
  - name: work
  - name: done
    terminal: completion
`

// agentsEngine is a real engine over a repository directory with config.
func agentsEngine(t *testing.T, config string) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(config), 0o644))
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	return engine.New(cfg, store, reg, nil)
}

// readsOf counts the times each file of dir named in names is opened for
// reading and closed, from the kernel's inotify events, while f runs.
func readsOf(t *testing.T, dir string, names []string, f func()) map[string]int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(fd)
	_, err = unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_NOWRITE)
	require.NoError(t, err)
	f()
	reads := map[string]int{}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return reads
		}
		require.NoError(t, err)
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)])
			for _, want := range names {
				if name == want || len(name) > len(want) && name[:len(want)] == want && name[len(want)] == 0 {
					reads[want]++
				}
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// An agent's next over the socket is answered with the engine's result,
// which the client renders as a person's CLI prints it; the issue is read
// once for it (issue.yaml and events.jsonl each opened for reading once,
// under the issue's lock), and a retry of the same request is told what it
// did, without a read more or a move.
func TestNextIsTheEnginesResultFromOneRead(t *testing.T) {
	e := agentsEngine(t, twoStages)
	iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Add login page", Stage: "work"})
	require.NoError(t, err)
	agents := api.Agents{Engine: func() (*engine.Engine, error) { return e, nil }}
	socket := serve(t, &api.Server{Sessions: tokens.Open(e.Store.Root()), Owner: os.Getuid(),
		Handlers: api.Handlers{Next: agents.Next, Create: agents.Create}})
	client := api.NewClient(socket, "")
	files := []string{"issue.yaml", "events.jsonl"}

	req := api.NextRequest{RequestID: "req-1", Issue: iss.ID}
	var out api.Output
	reads := readsOf(t, e.Store.HostDir(iss.ID), files, func() {
		out, err = client.Do(context.Background(), api.RouteNext, req)
	})
	require.NoError(t, err)
	assert.Equal(t, "issue 1 moved work → done (advance)\n\ndone is the end of the flow.\n", out.Text)
	assert.Equal(t, 0, out.ExitCode)
	assert.Equal(t, map[string]int{"issue.yaml": 1, "events.jsonl": 1}, reads, "opened for reading")

	moved, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	reads = readsOf(t, e.Store.HostDir(iss.ID), files, func() {
		out, err = client.Do(context.Background(), api.RouteNext, req)
	})
	require.NoError(t, err)
	assert.Equal(t, "issue 1: this request was already done: work → done (advance); it is now at done\n", out.Text)
	assert.Equal(t, map[string]int{"issue.yaml": 1, "events.jsonl": 1}, reads, "opened for reading")
	again, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, moved.Version, again.Version, "the retry changed nothing")

	out, err = client.Do(context.Background(), api.RouteNext, api.NextRequest{RequestID: "req-2", Issue: iss.ID, JSON: true})
	require.NoError(t, err)
	assert.Contains(t, out.Text, "\"status\": \"final\"", "--json is the engine's result, indented")
}

// An agent's issue create is answered with the issue, which the client
// prints as `issue create` does.
func TestCreateIsTheIssue(t *testing.T) {
	e := agentsEngine(t, twoStages)
	agents := api.Agents{Engine: func() (*engine.Engine, error) { return e, nil }}
	socket := serve(t, &api.Server{Sessions: tokens.Open(e.Store.Root()), Owner: os.Getuid(),
		Handlers: api.Handlers{Next: agents.Next, Create: agents.Create}})
	out, err := api.NewClient(socket, "").Do(context.Background(), api.RouteCreate, api.CreateRequest{RequestID: "c-1", Title: "Add login page"})
	require.NoError(t, err)
	iss, err := e.Store.Get(1)
	require.NoError(t, err)
	assert.Equal(t, "created issue 1 \"Add login page\" at work (flow default, branch "+iss.Branch+")\n", out.Text)
}

// A refusal comes back as one, with the exit code the CLI ends with, and
// no result: an agent's next on another issue than its session's.
func TestNextOnAnotherIssueIsRefused(t *testing.T) {
	e := agentsEngine(t, twoStages)
	iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Add login page", Stage: "work"})
	require.NoError(t, err)
	sessions := tokens.Open(e.Store.Root())
	token, err := sessions.Mint(iss.ID+1, "developer")
	require.NoError(t, err)
	agents := api.Agents{Engine: func() (*engine.Engine, error) { return e, nil }}
	socket := serve(t, &api.Server{Sessions: sessions, Owner: os.Getuid(), Handlers: api.Handlers{Next: agents.Next}})
	_, err = api.NewClient(socket, token).Do(context.Background(), api.RouteNext, api.NextRequest{RequestID: "r", Issue: iss.ID})
	var refused *api.Error
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, refused.Message, "is not its own")
	assert.Equal(t, 3, refused.ExitCode)
}
