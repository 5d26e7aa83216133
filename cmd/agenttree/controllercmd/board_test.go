package controllercmd

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/internal/syncbuf"
)

// boardURLRE is a board's URL, its login token the submatch.
var boardURLRE = regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/\?token=([0-9a-f]{64})\n$`)

// runBoard runs `controller --http` until the returned stop, its output
// in out and its log in log, and waits for its board's URL file; it
// returns the URL and the file's path.
func runBoard(t *testing.T, a *cmdutil.App) (url, path string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		ran <- controllerRun(ctx, &ControllerOptions{App: a, Interval: time.Hour, LogFormat: "json", HTTP: "127.0.0.1:0"})
	}()
	e, err := a.Engine(t.Context())
	require.NoError(t, err)
	path = statedir.Layout{Root: e.Store.Root()}.BoardURL()
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(path)
		url = string(data)
		return err == nil
	}, 30*time.Second, 20*time.Millisecond, "the controller writes its board's URL")
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-ran:
			require.NoError(t, err)
		case <-time.After(60 * time.Second):
			t.Fatal("the controller did not stop")
		}
	}
	t.Cleanup(stop)
	return url, path, stop
}

// `controller --http` keeps the board's login token out of its log
// (stderr, where a service manager keeps it) and off a stdout that is not
// a terminal (docs/SECURITY.md, "The board"): the person reads the URL
// in a file of their own alone, which the log names, and which is gone
// once the controller stops.
func TestControllerBoardURLIsNotLogged(t *testing.T) {
	w := newWorkspace(t, false)
	var out, log syncbuf.Buffer
	w.App.Out, w.App.ErrOut = &out, &log
	url, path, stop := runBoard(t, w.App)

	m := boardURLRE.FindStringSubmatch(url)
	require.NotNil(t, m, "the file holds the board's URL: %q", url)
	token := m[1]
	fi, err := os.Stat(path)
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the URL file is its owner's alone")
	}
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "board listening") }, 30*time.Second, 20*time.Millisecond)
	assert.Contains(t, log.String(), `"url_file":"`+path+`"`, "the log says where the URL is")

	resp, err := http.Get(strings.TrimSpace(url))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the URL in the file opens the board")

	stop()
	assert.NotContains(t, log.String(), token, "the login token is not in the controller's log")
	assert.NotContains(t, out.String(), token, "nor on a stdout that is not a terminal")
	assert.NoFileExists(t, path, "a controller that stops removes its board's URL")
}
