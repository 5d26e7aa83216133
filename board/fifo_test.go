//go:build unix

package board_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent that makes ci_feedback.md a FIFO holds no page: the issue's
// page and its live fragment are answered at once, without a CI log
// (docs/SECURITY.md, the board: slow or many clients cannot hold it).
func TestACIFeedbackFIFOHoldsNoPage(t *testing.T) {
	r := newRig(t)
	iss := r.create(t, "Add login page", "implementation_review")
	dir := r.e.Store.Dir(iss.ID)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	fifo := filepath.Join(dir, "ci_feedback.md")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	// A board that waits in the open for a writer gets one as the test
	// ends, so that its server can close.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tests := []struct {
		name, want string
		read       func() string
	}{
		{name: "the issue's page", want: "Add login page", read: func() string {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url("/issues/1"), nil)
			if !assert.NoError(t, err) {
				return ""
			}
			resp, err := http.DefaultClient.Do(req)
			if !assert.NoError(t, err) {
				return ""
			}
			defer resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			body, _ := io.ReadAll(resp.Body)
			return string(body)
		}},
		{name: "its live fragment", want: `data-stage="implementation_review"`, read: func() string {
			return readEvent(t, ctx, r.url("/issues/1/events"), "").data
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan string, 1)
			go func() { got <- tt.read() }()
			select {
			case body := <-got:
				assert.Contains(t, body, tt.want)
			case <-time.After(10 * time.Second):
				t.Fatal("the board is still opening the FIFO after 10 s")
			}
		})
	}
}
