package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer the spinner's goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAQuickWaitShowsNothing(t *testing.T) {
	var out syncBuffer
	Start(&out, true, "checking").Stop()
	assert.Empty(t, out.String())
}

func TestALongWaitIsShownThenWiped(t *testing.T) {
	var out syncBuffer
	s := Start(&out, true, "checking the gates of issue 3")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "checking the gates of issue 3 (") }, 5*time.Second, 20*time.Millisecond)
	s.Stop()
	assert.True(t, strings.HasSuffix(out.String(), "\r\x1b[K"), "the line is wiped: %q", out.String())
}

func TestOffShowsNothing(t *testing.T) {
	var out syncBuffer
	s := Start(&out, false, "checking")
	assert.Nil(t, s)
	s.Stop()
	assert.False(t, Terminal(&out, func(string) string { return "" }), "a buffer is no terminal")
}
