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
	review := "  - name: implementation_review\n    human_review: true\n"
	cfg := testpipeline.Read(t, "cli")
	require.Contains(t, cfg, review)
	return strings.Replace(cfg, review, review+"    pre_completion:\n      - run:\n          command: touch "+started+" && sleep 2\n", 1)
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
