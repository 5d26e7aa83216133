package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// Ctrl-C while another process holds the issue is an interruption (130),
// not "waiting on someone" (3).
func TestInterruptedWhileWaitingForTheIssueLock(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Login", "--stage", "implement.code")
	unlock, err := atomicfile.Lock(context.Background(), filepath.Join(w.hostDir(id), ".lock"), time.Second, "the test")
	require.NoError(t, err)
	defer unlock()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel) // as the SIGINT handler does
	var stdout, stderr bytes.Buffer
	code := run(ctx, w.dir, []string{"--config", w.config, "next", "-i", itoa(id)}, func(string) string { return "" },
		strings.NewReader(""), &stdout, &stderr)
	assert.Equal(t, exitInterrupted, code, stderr.String())
	assert.Regexp(t, `another agenttree process \(pid \d+, agenttree[^)]*\) holds`, stderr.String(), "the holder is named")
}
