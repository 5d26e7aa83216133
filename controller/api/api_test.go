package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/sessions/tokens"
)

func TestDecodeIsStrict(t *testing.T) {
	for _, tt := range []struct {
		name, body, err string
	}{
		{"fine", `{"request_id":"a1","dry_run":true}`, ""},
		{"unknown field", `{"request_id":"a1","stage":"accepted"}`, "unknown field"},
		{"two values", `{"request_id":"a"}{"request_id":"b"}`, "more than one"},
		{"wrong type", `{"issue":"1"}`, "cannot unmarshal"},
		{"not JSON", `issue=1`, "bad request"},
		{"too large", `{"request_id":"` + strings.Repeat("x", api.MaxRequestBytes) + `"}`, "larger than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var req api.NextRequest
			err := api.Decode(strings.NewReader(tt.body), &req)
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

// Whatever bytes arrive, decoding never panics, and what it accepts reads
// back the same once encoded again.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{"request_id":"a","issue":3,"dry_run":true,"json":true}`, `{"title":"x","vars":{"a":[1,{"b":null}]}}`, `{}`, `[]`, `{"issue":-1}`, "\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, req := range []any{&api.NextRequest{}, &api.CreateRequest{}, &api.ShowRequest{}, &api.StatusRequest{}, &api.InboxRequest{}, &api.SessionRequest{}} {
			if err := api.Decode(strings.NewReader(body), req); err != nil {
				continue
			}
			again, err := json.Marshal(req)
			require.NoError(t, err)
			fresh := newLike(req)
			require.NoError(t, api.Decode(strings.NewReader(string(again)), fresh), "%s", again)
			twice, err := json.Marshal(fresh)
			require.NoError(t, err)
			assert.JSONEq(t, string(again), string(twice))
		}
	})
}

func newLike(v any) any {
	switch v.(type) {
	case *api.NextRequest:
		return &api.NextRequest{}
	case *api.CreateRequest:
		return &api.CreateRequest{}
	case *api.ShowRequest:
		return &api.ShowRequest{}
	case *api.StatusRequest:
		return &api.StatusRequest{}
	case *api.InboxRequest:
		return &api.InboxRequest{}
	}
	return &api.SessionRequest{}
}

// serve starts a server on a socket in a short directory (socket paths
// are limited to about 100 bytes) and returns its path.
func serve(t *testing.T, srv *api.Server) string {
	t.Helper()
	socket, ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return socket
}

// listen listens on a socket in a short directory (socket paths are
// limited to about 100 bytes).
func listen(t *testing.T) (string, net.Listener) {
	t.Helper()
	dir, err := os.MkdirTemp("", "api")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "s.sock")
	ln, err := api.Listen(socket)
	require.NoError(t, err)
	return socket, ln
}

// The kernel says who connects: this test's process owns the state, so it
// is a person without a token, and the session's agent with one.
func TestCallerIsToldByTheKernelAndTheToken(t *testing.T) {
	root := t.TempDir()
	sessions := tokens.Open(root)
	var seen []api.Caller
	srv := &api.Server{Sessions: sessions, Owner: os.Getuid(), Handlers: api.Handlers{
		Status: func(_ context.Context, c api.Caller, req api.StatusRequest) (any, error) {
			seen = append(seen, c)
			return api.Output{Text: "shown\n"}, nil
		},
	}}
	socket := serve(t, srv)
	ctx := context.Background()

	out, err := api.NewClient(socket, "").Do(ctx, api.RouteStatus, api.StatusRequest{Issue: 1})
	require.NoError(t, err)
	assert.Equal(t, "shown\n", out.Text)
	require.Len(t, seen, 1)
	assert.True(t, seen[0].Person)
	assert.Equal(t, os.Getpid(), seen[0].PID)
	assert.Nil(t, seen[0].Session)

	token, err := sessions.Mint(7, "reviewer")
	require.NoError(t, err)
	_, err = api.NewClient(socket, token).Do(ctx, api.RouteStatus, api.StatusRequest{})
	require.NoError(t, err)
	require.Len(t, seen, 2)
	assert.False(t, seen[1].Person, "a token lowers a person to the session's agent")
	require.NotNil(t, seen[1].Session)
	assert.Equal(t, 7, seen[1].Session.Issue)

	_, err = api.NewClient(socket, "att_forged").Do(ctx, api.RouteStatus, api.StatusRequest{})
	var refused *api.Error
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, refused.Message, "not one this controller gave")
	assert.Len(t, seen, 2, "a refused request reaches no handler")

	_, err = api.NewClient(socket, "").Do(ctx, api.RouteNext, api.NextRequest{})
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, refused.Message, "does not answer")
}

// No socket: refused at once, saying who starts the controller. A socket
// that appears while the client waits (a controller restarting) answers.
func TestClientWaitsForARestartingController(t *testing.T) {
	dir, err := os.MkdirTemp("", "api")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "s.sock")
	start := time.Now()
	_, err = api.NewClient(socket, "").Do(context.Background(), api.RouteStatus, api.StatusRequest{})
	var unavailable *api.Unavailable
	require.ErrorAs(t, err, &unavailable)
	assert.Contains(t, err.Error(), "`agenttree controller`")
	assert.Less(t, time.Since(start), 10*time.Second, "no socket is refused without the full wait")

	// A socket left by a controller that died: connections are refused
	// until the next one listens.
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	require.NoError(t, err)
	dead.SetUnlinkOnClose(false)
	require.NoError(t, dead.Close())
	srv := &api.Server{Sessions: tokens.Open(t.TempDir()), Owner: os.Getuid(), Handlers: api.Handlers{
		Status: func(context.Context, api.Caller, api.StatusRequest) (any, error) {
			return api.Output{Text: "back"}, nil
		},
	}}
	go func() {
		time.Sleep(300 * time.Millisecond)
		ln, err := api.Listen(socket)
		if err != nil {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		_ = srv.Serve(ctx, ln)
	}()
	out, err := api.NewClient(socket, "").Do(context.Background(), api.RouteStatus, api.StatusRequest{})
	require.NoError(t, err)
	assert.Equal(t, "back", out.Text)
}

// A repository deep in the file system has a socket path longer than a
// socket address holds: the controller still listens there, and agents
// still reach it.
func TestASocketDeepInTheFileSystem(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 120 {
		dir = filepath.Join(dir, "a-rather-long-directory-name")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	socket := filepath.Join(dir, "run", "controller.sock")
	ln, err := api.Listen(socket)
	require.NoError(t, err)
	srv := &api.Server{Sessions: tokens.Open(t.TempDir()), Owner: os.Getuid(), Handlers: api.Handlers{
		Status: func(context.Context, api.Caller, api.StatusRequest) (any, error) {
			return api.Output{Text: "deep"}, nil
		},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
	out, err := api.NewClient(socket, "").Do(context.Background(), api.RouteStatus, api.StatusRequest{})
	require.NoError(t, err)
	assert.Equal(t, "deep", out.Text)
	cancel()
	<-done
	assert.NoFileExists(t, socket, "closing removes the socket")
}

// A controller that stops answers the requests it is working on first:
// Serve returns once they are answered, not when the stop begins.
func TestServeReturnsOnceTheRequestsInFlightAreAnswered(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	srv := &api.Server{Sessions: tokens.Open(t.TempDir()), Owner: os.Getuid(), Handlers: api.Handlers{
		Status: func(context.Context, api.Caller, api.StatusRequest) (any, error) {
			close(started)
			<-release
			return api.Output{Text: "shown\n"}, nil
		},
	}}
	socket, ln := listen(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ctx, ln) }()

	answered := make(chan error, 1)
	go func() {
		out, err := api.NewClient(socket, "").Do(context.Background(), api.RouteStatus, api.StatusRequest{})
		if err == nil && out.Text != "shown\n" {
			err = errors.New("answered " + out.Text)
		}
		answered <- err
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the request never reached its handler")
	}
	stop()
	select {
	case <-served:
		t.Fatal("Serve returned while a request was still being worked on")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-answered)
	select {
	case <-served:
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return once the request was answered")
	}
}

// A controller of this host whose term ended stops after the one elected
// next made its own socket at the same path (docs/ARCHITECTURE.md §8):
// the old one's stop leaves the new socket where agents find it, short
// path or long.
func TestAnOldControllersStopLeavesTheNewSocket(t *testing.T) {
	long := t.TempDir()
	for len(long) < 120 {
		long = filepath.Join(long, "a-rather-long-directory-name")
	}
	for name, dir := range map[string]string{"short": t.TempDir(), "long": long} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			socket := filepath.Join(dir, "run", "controller.sock")
			serve := func(text string) (stop func()) {
				ln, err := api.Listen(socket)
				require.NoError(t, err)
				srv := &api.Server{Sessions: tokens.Open(t.TempDir()), Owner: os.Getuid(), Handlers: api.Handlers{
					Status: func(context.Context, api.Caller, api.StatusRequest) (any, error) {
						return api.Output{Text: text}, nil
					},
				}}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
				return func() { cancel(); <-done }
			}
			stopOld := serve("old")
			stopNew := serve("new")
			stopOld()
			out, err := api.NewClient(socket, "").Do(context.Background(), api.RouteStatus, api.StatusRequest{})
			require.NoError(t, err, "the new controller's socket is still there")
			assert.Equal(t, "new", out.Text)
			stopNew()
			assert.NoFileExists(t, socket, "closing removes its own socket")
		})
	}
}
