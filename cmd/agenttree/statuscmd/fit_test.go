package statuscmd

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/sessions/waiton"
)

func TestFitColumns(t *testing.T) {
	header := []string{"ID", "STAGE", "WAITING ON", "TITLE"}
	tests := []struct {
		name  string
		rows  [][]string
		width int
		want  [][]string
	}{
		{name: "no width: whole",
			rows:  [][]string{{"1", "implement.code", "agent working (developer), for 3s", "Add a health check"}},
			width: 0,
			want:  [][]string{{"1", "implement.code", "agent working (developer), for 3s", "Add a health check"}}},
		{name: "fits already",
			rows:  [][]string{{"1", "backlog", "parked", "Dark mode"}},
			width: 80,
			want:  [][]string{{"1", "backlog", "parked", "Dark mode"}}},
		{name: "the widest cell gives way first",
			// 2+2+7+2+50+2+9 = 74 runes; 40 leaves the waiting cell 16.
			rows:  [][]string{{"1", "backlog", strings.Repeat("w", 50), "Dark mode"}},
			width: 40,
			want:  [][]string{{"1", "backlog", strings.Repeat("w", 15) + "…", "Dark mode"}}},
		{name: "two long cells narrow to the same width",
			// 2+2+5+2+30+2+30 = 73 runes; 53 takes 10 from each.
			rows:  [][]string{{"1", "pr", strings.Repeat("w", 30), strings.Repeat("t", 30)}},
			width: 53,
			want:  [][]string{{"1", "pr", strings.Repeat("w", 19) + "…", strings.Repeat("t", 19) + "…"}}},
		{name: "a short cell in a cut column stays whole",
			// 2+2+5+2+30+2+5 = 48 runes (STAGE and TITLE as wide as their
			// headers); 30 leaves the waiting cell 12.
			rows:  [][]string{{"1", "pr", strings.Repeat("w", 30), "x"}, {"2", "pr", "short", "y"}},
			width: 30,
			want:  [][]string{{"1", "pr", strings.Repeat("w", 11) + "…", "x"}, {"2", "pr", "short", "y"}}},
		{name: "runes, not bytes",
			rows:  [][]string{{"1", "pr", strings.Repeat("é", 30), "x"}},
			width: 30,
			want:  [][]string{{"1", "pr", strings.Repeat("é", 11) + "…", "x"}}},
		{name: "never below the header, nor the id",
			rows:  [][]string{{"123456", "implement.code", strings.Repeat("w", 30), strings.Repeat("t", 30)}},
			width: 10,
			want:  [][]string{{"123456", "impl…", strings.Repeat("w", 9) + "…", "tttt…"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := append([][]string{append([]string(nil), header...)}, tt.rows...)
			fitColumns(table, tableGap, tt.width)
			assert.Equal(t, header, table[0], "the header is never cut")
			assert.Equal(t, tt.want, table[1:])
		})
	}
}

// The status table on an 80-column terminal: every line fits, the long
// cells cut with "…"; not on a terminal, nothing is cut.
func TestWriteStatusFitsTheWidth(t *testing.T) {
	now := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	long := "agent working (developer) after a step back: CI failed on 0123456789ab: test-unit, test-integration, lint"
	rows := []Row{
		{ID: 1, Stage: "implement.feedback", Owner: "agent: developer", Next: "pr_ready", Title: "Add a health check endpoint to the API server",
			wait: waiton.Waiting{What: long, Since: now.Add(-time.Minute)}},
		{ID: 12, Stage: "implementation_review", Owner: "human review", Next: "accepted", Title: "Dark mode", wait: waiton.Waiting{What: "waiting for human review"}},
	}
	for _, width := range []int{80, 100, 60} {
		var out bytes.Buffer
		require.NoError(t, writeStatus(&out, rows, now, width))
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		require.Len(t, lines, 3)
		for _, l := range lines {
			assert.LessOrEqual(t, utf8.RuneCountInString(l), width, "%q", l)
		}
		assert.Contains(t, lines[1], "…", "the long cells are cut")
		assert.Regexp(t, `^1\s+implement`, lines[1], "the id is whole")
		assert.Regexp(t, `Dark mode$`, lines[2], "a short cell stays whole")
	}
	var out bytes.Buffer
	require.NoError(t, writeStatus(&out, rows, now, 0))
	assert.Contains(t, out.String(), long+", for 1m0s")
	assert.Contains(t, out.String(), "Add a health check endpoint to the API server")
	assert.NotContains(t, out.String(), "…")
}

// A pipe or a file is no terminal: its width is 0 whatever $COLUMNS says.
func TestTerminalWidthOfAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	getenv := func(string) string { return "80" }
	assert.Zero(t, terminalWidth(w, getenv))
	assert.Zero(t, terminalWidth(&bytes.Buffer{}, getenv))
}
