package eventlog_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/engine/issues/record"
)

// written logs an issue's create and one update in a fresh log, as the
// store does, and returns the log and the issue at each version (Chain
// set to its line).
func written(t *testing.T) (eventlog.Log, []*record.Issue) {
	t.Helper()
	l := eventlog.In(t.TempDir(), 7)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v1 := &record.Issue{ID: 7, Slug: "s", Flow: "default", Stage: "plan", Version: 1, Created: at, Updated: at,
		History: []record.HistoryEntry{{To: "plan", Kind: record.KindCreate, Actor: "human", At: at}}}
	raw, hash, err := eventlog.Encode("", v1, eventlog.OpCreate, at, v1.History, nil)
	require.NoError(t, err)
	require.NoError(t, l.Lines.(chain.Log).AppendEncoded(raw))
	v1.Chain = hash

	v2 := *v1
	v2.Version, v2.Stage = 2, "code"
	added := record.HistoryEntry{From: "plan", To: "code", Kind: "advance", Actor: "agent", At: at}
	v2.History = append(append([]record.HistoryEntry(nil), v1.History...), added)
	raw, hash, err = eventlog.Encode(v1.Chain, &v2, eventlog.OpUpdate, at, []record.HistoryEntry{added}, nil)
	require.NoError(t, err)
	require.NoError(t, l.Lines.(chain.Log).AppendEncoded(raw))
	v2.Chain = hash
	return l, []*record.Issue{v1, &v2}
}

func TestCheckHead(t *testing.T) {
	tests := []struct {
		name string
		// yaml is issue.yaml as the check reads it, from the versions
		// written.
		yaml        func(v []*record.Issue) *record.Issue
		interrupted bool
		problem     string // "" when the head checks
		changes     []string
	}{
		{name: "the last state", yaml: func(v []*record.Issue) *record.Issue { return v[1] }},
		{name: "one write behind: interrupted", interrupted: true,
			yaml: func(v []*record.Issue) *record.Issue { return v[0] }},
		{name: "an edited stage",
			yaml: func(v []*record.Issue) *record.Issue {
				e := *v[1]
				e.Stage = "accepted"
				return &e
			},
			problem: "differs from the last state", changes: []string{"stage: code → accepted"}},
		{name: "its chain removed",
			yaml: func(v []*record.Issue) *record.Issue {
				e := *v[1]
				e.Chain = ""
				return &e
			},
			problem: "has no chain"},
		{name: "another issue's", problem: "says it is issue 8",
			yaml: func(v []*record.Issue) *record.Issue {
				e := *v[1]
				e.ID = 8
				return &e
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, v := written(t)
			h, err := l.CheckHead(tt.yaml(v))
			if tt.problem == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.interrupted, h.Next != nil)
				if tt.interrupted {
					assert.Equal(t, v[1].Stage, h.Next.Stage)
					assert.Len(t, h.Next.History, 2)
				}
				return
			}
			var te *eventlog.TamperedError
			require.True(t, errors.As(err, &te), "%v", err)
			assert.Contains(t, te.Problem, tt.problem)
			assert.Equal(t, tt.changes, te.Changes)
		})
	}
}

// Check reads the whole log: the last state verifies, one write behind
// is an interrupted write, not a problem, and an issue.yaml that cannot be
// read is the problem its caller found.
func TestCheckReplaysTheWholeLog(t *testing.T) {
	l, v := written(t)
	rep := l.Check(v[1], nil)
	assert.True(t, rep.OK, "%v", rep.Problems)
	assert.Equal(t, 2, rep.Lines)
	assert.Equal(t, 2, rep.Version)

	rep = l.Check(v[0], nil)
	assert.True(t, rep.OK, "%v", rep.Problems)
	assert.True(t, rep.Interrupted)

	r := l.Replay()
	require.Len(t, r.Events, 2)
	assert.Equal(t, v[1].Chain, r.LastLine().Hash)
	assert.Equal(t, int64(-1), r.Cut)

	rep = l.Check(nil, []string{"issue.yaml is missing"})
	assert.False(t, rep.OK)
	assert.Equal(t, []string{"issue.yaml is missing"}, rep.Problems)
}
