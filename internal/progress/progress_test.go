package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/agenttree/agenttree/internal/syncbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAQuickWaitShowsNothing(t *testing.T) {
	var out syncbuf.Buffer
	Start(&out, true, "checking").Stop()
	assert.Empty(t, out.String())
}

func TestALongWaitIsShownThenWiped(t *testing.T) {
	var out syncbuf.Buffer
	s := Start(&out, true, "checking the gates of issue 3")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "checking the gates of issue 3 (") }, 5*time.Second, 20*time.Millisecond)
	s.Stop()
	assert.True(t, strings.HasSuffix(out.String(), "\r\x1b[K"), "the line is wiped: %q", out.String())
}

func TestOffShowsNothing(t *testing.T) {
	var out syncbuf.Buffer
	s := Start(&out, false, "checking")
	assert.Nil(t, s)
	s.Stop()
	assert.False(t, Terminal(&out, func(string) string { return "" }), "a buffer is no terminal")
}
