package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/internal/syncbuf"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// `board` and `controller --http` serve the board on loopback and hand
// the person its URL with the login token, never on stderr (the
// controller's log): `board` on stdout, the controller (its stdout no
// terminal here) in its URL file (docs/SECURITY.md, "The board"); an
// address that is not loopback needs --public, and an agent serves no
// board.
func TestBoardCommands(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		// url: the command serves and prints a URL (in its URL file with
		// inFile); else it ends with code, saying want.
		url, inFile bool
		code        int
		want        string
	}{
		{name: "board", args: []string{"board"}, url: true},
		{name: "controller --http", args: []string{"controller", "--http", "127.0.0.1:0", "--interval", "50ms"}, url: true, inFile: true},
		{name: "board on every interface", args: []string{"board", "--http", "0.0.0.0:0"}, code: 2, want: "not a loopback address"},
		{name: "controller on every interface", args: []string{"controller", "--http", ":0"}, code: 2, want: "pass --public"},
		{name: "board public", args: []string{"board", "--http", "0.0.0.0:0", "--public"}, url: true},
		{name: "an agent's board", env: agentEnv, args: []string{"board"}, code: 3, want: "the board acts for a person"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			w.create(t, "Add login page", "--stage", "plan.review")
			env := tt.env
			if env == nil {
				env = humanEnv
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var out, errOut syncbuf.Buffer
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, w.dir, append([]string{"--config", w.config}, tt.args...), func(k string) string { return env[k] },
					strings.NewReader(""), &out, &errOut)
			}()
			if !tt.url {
				select {
				case code := <-done:
					assert.Equal(t, tt.code, code)
					assert.Contains(t, errOut.String(), tt.want)
				case <-time.After(30 * time.Second):
					t.Fatal("the command did not end")
				}
				return
			}
			urlRE := regexp.MustCompile(`board: (http://127\.0\.0\.1:[0-9]+/\?token=([0-9a-f]{64}))\n`)
			urlFile := statedir.Layout{Root: filepath.Join(w.dir, "_agenttree")}.BoardURL()
			var url, token string
			require.Eventually(t, func() bool {
				shown := out.String()
				if tt.inFile {
					data, _ := os.ReadFile(urlFile)
					shown = "board: " + string(data)
				}
				m := urlRE.FindStringSubmatch(shown)
				if m != nil {
					url, token = m[1], m[2]
				}
				return m != nil
			}, 30*time.Second, 20*time.Millisecond, "the URL is shown: %s %s", out.String(), errOut.String())
			resp, err := http.Get(url)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Contains(t, string(body), "Add login page")
			resp, err = http.Get(strings.Split(url, "?")[0])
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "not without the token")
			cancel()
			select {
			case code := <-done:
				assert.Equal(t, 0, code, errOut.String())
			case <-time.After(30 * time.Second):
				t.Fatal("the command did not stop with its context")
			}
			assert.NotContains(t, errOut.String(), token, "the login token is not on stderr")
			if tt.inFile {
				assert.NotContains(t, out.String(), token, "nor on a stdout that is no terminal")
			}
		})
	}
}
