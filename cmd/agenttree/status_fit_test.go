package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/testpipeline"
)

// The status table fits an 80-column terminal, its long cells cut with
// "…" (the prose under it wraps as the terminal wraps it); piped, it is
// whole.
func TestStatusFitsTheTerminal(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	const title = "Add a health check endpoint that reports the database, the cache and the queue"
	w.create(t, title, "--stage", "implement.code")
	w.create(t, "Dark mode", "--stage", "implementation_review")

	server := newTmuxServer(t)
	server.run(t, "new-session", "-d", "-s", "fit", "-x", "80", "-y", "30", "-c", w.dir, "--",
		"sh", "-c", `"$0" status; echo "exit $?"; exec sleep 600`, binary)
	var screen string
	require.Eventually(t, func() bool {
		out, err := server.captured("fit")
		screen = out
		return err == nil && strings.Contains(out, "exit ")
	}, settleWithin, lookEvery, "status runs in the pane")
	assert.Contains(t, screen, "exit 0")
	lines := strings.Split(screen, "\n")
	var table []string
	for _, l := range lines {
		if strings.HasPrefix(l, "ID ") || strings.HasPrefix(l, "1 ") || strings.HasPrefix(l, "2 ") {
			assert.LessOrEqual(t, utf8.RuneCountInString(l), 80, "a line of the table wider than the terminal: %q", l)
			table = append(table, l)
		}
	}
	require.Len(t, table, 3, screen)
	assert.Contains(t, table[1], "…", "the long cells are cut")
	assert.NotContains(t, screen, title)
	assert.Regexp(t, `Dark mode\s*$`, table[2])

	res := w.run(t, humanEnv, "status")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, title, "piped, nothing is cut")
	assert.NotContains(t, res.stdout, "…")
}
