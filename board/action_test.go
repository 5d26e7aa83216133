package board_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/board"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// slowReview is the cli pipeline with a gate on leaving the human review
// that says when it started (touching the file started) and takes 2 s.
func slowReview(t *testing.T, started string) string {
	t.Helper()
	return gatedReview(t, "touch "+started+" && sleep 2")
}

// gatedReview is the cli pipeline with a gate on leaving the human review
// that runs command.
func gatedReview(t *testing.T, command string) string {
	t.Helper()
	review := "  - name: implementation_review\n    human_review: true\n"
	cfg := testpipeline.Read(t, "cli")
	require.Contains(t, cfg, review)
	return strings.Replace(cfg, review, review+"    pre_completion:\n      - run:\n          command: "+command+"\n", 1)
}

// A person's action is done to the end and answered though the request
// that asked for it is gone (a tab closed, a connection dropped) or its
// answer comes after the server's write timeout: an approve cut off
// between its gates and the move helps nobody (docs/ARCHITECTURE.md §11).
func TestAnActionIsFinishedAndAnswered(t *testing.T) {
	tests := []struct {
		name string
		// leave: the client cancels its request once the gate started.
		leave bool
	}{
		{name: "the browser goes away mid-way", leave: true},
		{name: "the gate takes longer than the write timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := filepath.Join(t.TempDir(), "started")
			r := newRigWith(t, slowReview(t, started))
			iss := r.create(t, "Add login page", "implementation_review")
			form := url.Values{"csrf": {r.csrf(t, iss.ID)}}
			board.SetLimits(r.srv, 10*time.Second, 30*time.Second, time.Second, time.Minute, 64)
			base := r.serve(t)

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/issues/1/approve?token="+r.srv.Token(), strings.NewReader(form.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			type answer struct {
				code int
				body string
				err  error
			}
			answered := make(chan answer, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					answered <- answer{err: err}
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				answered <- answer{code: resp.StatusCode, body: string(body), err: err}
			}()
			require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, 20*time.Second, 10*time.Millisecond,
				"the approve's gate started")
			if tt.leave {
				cancel()
			}
			a := <-answered
			if !tt.leave {
				require.NoError(t, a.err, "the answer is delivered")
				assert.Equal(t, http.StatusOK, a.code, a.body)
				assert.Contains(t, a.body, "implementation_review → accepted")
			}
			require.Eventually(t, func() bool {
				got, err := r.e.Store.Get(iss.ID)
				return err == nil && got.Stage == "accepted" && got.Version > iss.Version
			}, 20*time.Second, 20*time.Millisecond, "the approve moved the issue on")
		})
	}
}

// The board's stop (`controller --http` stopping) cancels an action in
// flight through the engine and returns only once it ended, answered:
// no gate runs on in a board that stopped, to move the issue after it,
// and the issue is whole, as it was or moved (docs/ARCHITECTURE.md §11).
func TestTheBoardsStopEndsTheActionsInFlight(t *testing.T) {
	tests := []struct {
		name string
		// leave: the browser went away before the stop.
		leave bool
	}{
		{name: "the browser waits for the answer"},
		{name: "the browser went away", leave: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			started, finished := filepath.Join(dir, "started"), filepath.Join(dir, "finished")
			r := newRigWith(t, gatedReview(t, "touch "+started+" && sleep 3 && touch "+finished))
			iss := r.create(t, "Add login page", "implementation_review")
			form := url.Values{"csrf": {r.csrf(t, iss.ID)}}
			ln, err := board.Listen("127.0.0.1:0", false)
			require.NoError(t, err)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			served := make(chan error, 1)
			go func() { served <- r.srv.Serve(ctx, ln) }()

			asked, leave := context.WithTimeout(context.Background(), time.Minute)
			defer leave()
			req, err := http.NewRequestWithContext(asked, http.MethodPost, "http://"+ln.Addr().String()+"/issues/1/approve?token="+r.srv.Token(),
				strings.NewReader(form.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			answered := make(chan string, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					answered <- "no answer: " + err.Error()
					return
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				answered <- resp.Status + ": " + string(body)
			}()
			require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, 20*time.Second, 10*time.Millisecond,
				"the approve's gate started")
			if tt.leave {
				leave()
			}
			stop()
			select {
			case err := <-served:
				require.NoError(t, err)
			case <-time.After(time.Minute):
				t.Fatal("the board's stop did not return within a minute")
			}
			atStop, err := r.e.Store.Get(iss.ID)
			require.NoError(t, err)
			_, err = os.Stat(finished)
			finishedAtStop := err == nil
			time.Sleep(4 * time.Second) // past the gate's sleep, were it still running
			if !tt.leave {
				select {
				case a := <-answered:
					assert.Regexp(t, `^(200|409) `, a, "the action ended, through the engine, and was answered")
				default:
					t.Error("the action was not answered")
				}
			}
			after, err := r.e.Store.Get(iss.ID)
			require.NoError(t, err)
			_, err = os.Stat(finished)
			assert.Equal(t, finishedAtStop, err == nil, "the gate ran on after the board's stop returned")
			assert.Equal(t, atStop.Stage, after.Stage, "the issue moved after the board's stop returned")
			assert.Equal(t, atStop.Version, after.Version, "the issue was written after the board's stop returned")
			assert.Contains(t, []string{"implementation_review", "accepted"}, after.Stage)
			rep, err := r.e.Store.Verify(iss.ID)
			require.NoError(t, err)
			assert.True(t, rep.OK, "verify: %v", rep.Problems)
		})
	}
}
