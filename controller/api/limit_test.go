//go:build linux

package api_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/controller/api/apitest"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/syncbuf"
	"github.com/agenttree/agenttree/sessions/tokens"
)

func TestMain(m *testing.M) {
	apitest.FloodMain()
	os.Exit(m.Run())
}

// Bounds of the waits for what the server does in the background: far
// above what it takes, for a loaded machine.
const (
	settleWithin = 20 * time.Second
	lookEvery    = 20 * time.Millisecond
)

// Peers flood the socket one after another, each holding what it is let:
// the uid of another user on the host, root in a container (another mount
// namespace, as `unshare --mount` makes), and that other user in one. Each
// is held to its own cap and agents together to theirs; what they are
// refused is closed at once and logged once per peer; root on the host is
// still answered; a peer's places come back when its connections close.
func TestAFloodFromOnePeerSlowsOnlyThatPeer(t *testing.T) {
	other := ostest.OtherUser(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("a peer in another mount namespace needs unshare (util-linux)")
	}
	bin := ostest.Executable(t)
	var logs syncbuf.Buffer
	sessions := tokens.Open(t.TempDir())
	// An agent's session: a request without one is refused before its
	// body is read.
	token, err := sessions.Mint(1, "developer")
	require.NoError(t, err)
	srv := &api.Server{Sessions: sessions, Owner: os.Getuid(),
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
		// Agents together may hold 10-3 = 7.
		Limits: api.Limits{Conns: 10, PerPeer: 3},
		Handlers: api.Handlers{Status: func(context.Context, api.Caller, api.StatusRequest) (any, error) {
			return api.Output{Text: "shown"}, nil
		}}}
	socket := serve(t, srv)
	ostest.OpenUp(t, filepath.Dir(socket))
	inContainer := func(cmd *exec.Cmd) *exec.Cmd {
		return exec.Command("unshare", append([]string{"--mount", "--"}, cmd.Args...)...)
	}

	floods := []struct {
		name       string
		cmd        *exec.Cmd
		held       int
		logged     string
		uid        int
		containers bool
	}{
		{"another user", other.Command(bin), 3, "a peer is at its cap", other.UID, false},
		{"root in a container", inContainer(exec.Command(bin)), 3, "a peer is at its cap", 0, true},
		{"another user in a container", inContainer(other.Command(bin)), 1, "agents are at their cap", other.UID, true},
	}
	running := make([]*apitest.Running, len(floods))
	for i, f := range floods {
		// Each flood goes on while the next starts.
		running[i] = apitest.Start(t, f.cmd, apitest.Flood{Socket: socket, Token: token, Conns: 6, For: time.Minute})
		t.Run(f.name, func(t *testing.T) {
			requireHeld(t, running[i], 6, f.held)
			attrs := "uid=" + strconv.Itoa(f.uid) + " container=" + strconv.FormatBool(f.containers)
			require.Eventually(t, func() bool { return strings.Contains(logs.String(), attrs) }, settleWithin, lookEvery)
			lines := grepLines(logs.String(), attrs)
			assert.Len(t, lines, 1, "one line, not one per connection refused: %q", lines)
			assert.Contains(t, lines[0], f.logged)
		})
	}

	out, err := api.NewClient(socket, "").Do(t.Context(), api.RouteStatus, api.StatusRequest{})
	require.NoError(t, err, "root on the host is answered while agents hold all they may")
	assert.Equal(t, "shown", out.Text)

	// The first flood ends: its places are the next one's.
	running[0].Stop(t)
	again := apitest.Start(t, other.Command(bin), apitest.Flood{Socket: socket, Token: token, Conns: 6, For: time.Minute})
	requireHeld(t, again, 6, 3)
	for _, r := range append(running[1:], again) {
		r.Stop(t)
	}
}

// requireHeld waits until flood r has opened opened connections and the
// server holds held of them, having closed the rest.
func requireHeld(t *testing.T, r *apitest.Running, opened, held int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p := r.Progress()
		assert.Equal(c, opened, p.Opened, "opened")
		assert.Equal(c, held, p.Open, "held")
		assert.Equal(c, opened-held, p.Closed, "closed at once")
	}, settleWithin, lookEvery)
}

func grepLines(s, sub string) []string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// A request that does not arrive in time is cut off; work that takes
// longer than reading the request and writing the answer together is
// not; an answer its client does not read gives its connection back.
func TestRequestsAreBoundedNotTheWork(t *testing.T) {
	const (
		request = 300 * time.Millisecond
		reply   = 300 * time.Millisecond
	)
	srv := &api.Server{Sessions: tokens.Open(t.TempDir()), Owner: os.Getuid(),
		Limits: api.Limits{Conns: 4, PerPeer: 2, Request: request, Reply: reply},
		Handlers: api.Handlers{Status: func(_ context.Context, _ api.Caller, req api.StatusRequest) (any, error) {
			switch req.Issue {
			case 1: // `next` running gates
				time.Sleep(3 * (request + reply))
				return api.Output{Text: "worked"}, nil
			case 2: // more than a socket's buffers hold
				return api.Output{Text: strings.Repeat("x", 16<<20)}, nil
			}
			return api.Output{Text: "shown"}, nil
		}}}
	socket := serve(t, srv)

	t.Run("a body that does not come", func(t *testing.T) {
		conn, err := api.Dial(t.Context(), socket)
		require.NoError(t, err)
		defer conn.Close()
		start := time.Now()
		_, err = io.WriteString(conn, "POST "+api.RouteStatus+" HTTP/1.1\r\nHost: agenttree\r\nContent-Length: 100\r\n\r\n{")
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(settleWithin)))
		answer, err := io.ReadAll(conn)
		require.NoError(t, err, "the server closes the connection")
		assert.GreaterOrEqual(t, time.Since(start), request*2/3, "not before the request's time is up")
		assert.Contains(t, string(answer), "timeout")
	})

	t.Run("work longer than the request's and the answer's bounds", func(t *testing.T) {
		out, err := api.NewClient(socket, "").Do(t.Context(), api.RouteStatus, api.StatusRequest{Issue: 1})
		require.NoError(t, err)
		assert.Equal(t, "worked", out.Text)
	})

	t.Run("an answer nobody reads", func(t *testing.T) {
		// Two such clients hold all this peer may.
		for range 2 {
			conn, err := api.Dial(t.Context(), socket)
			require.NoError(t, err)
			t.Cleanup(func() { conn.Close() })
			_, err = io.WriteString(conn, "POST "+api.RouteStatus+" HTTP/1.1\r\nHost: agenttree\r\nContent-Length: 11\r\n\r\n{\"issue\":2}")
			require.NoError(t, err)
		}
		client := api.NewClient(socket, "")
		client.Wait = 100 * time.Millisecond
		require.Eventually(t, func() bool {
			out, err := client.Do(t.Context(), api.RouteStatus, api.StatusRequest{})
			return err == nil && out.Text == "shown"
		}, settleWithin, lookEvery, "the unread answers' connections are given back")
	})
}

// The socket's connections take a quarter of the open file limit at most
// (the rest is the controller's own: state files, git, tmux, the gates),
// and one peer an eighth of those.
func TestDefaultLimitsLeaveTheControllerItsFiles(t *testing.T) {
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	l := api.DefaultLimits()
	if lim.Cur >= 64 {
		assert.LessOrEqual(t, uint64(4*l.Conns), lim.Cur)
	}
	assert.LessOrEqual(t, 8*l.PerPeer, l.Conns)
	assert.Positive(t, l.PerPeer)
	assert.Positive(t, l.Request)
	assert.Greater(t, l.Reply, time.Duration(0))
}
