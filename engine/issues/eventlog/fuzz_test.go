package eventlog_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/engine/issues/record"
)

// FuzzCheck reads any events.jsonl as the log of an issue whose
// issue.yaml is the last of three writes, seeded with the log the store
// wrote for them and that log cut, torn and changed. The reader never
// accepts a log whose chain is broken: a whole check that finds nothing
// wrong (nor an interrupted write) read exactly the lines written, the
// head check passes only on the last line written, and the lines a replay
// keeps are the written ones, in order.
func FuzzCheck(f *testing.F) {
	dir := f.TempDir()
	orig, last := threeWrites(f, dir)
	f.Add(orig)
	f.Add(orig[:len(orig)-1])
	f.Add(orig[:bytes.IndexByte(orig, '\n')+1])
	f.Add(append(bytes.Clone(orig), `{"prev":"`...))
	f.Add(bytes.Replace(orig, []byte(`"version":2`), []byte(`"version":3`), 1))
	f.Add(bytes.Replace(orig, []byte(`"stage":"code"`), []byte(`"stage":"done"`), 1))
	want := eventlog.In(dir, 7).Replay()
	require.Len(f, want.Lines, 3)
	rep := eventlog.In(dir, 7).Check(last, nil)
	require.True(f, rep.OK && !rep.Interrupted, "%+v", rep)
	_, err := eventlog.In(dir, 7).CheckHead(last)
	require.NoError(f, err)
	path := filepath.Join(dir, "fuzzed", eventlog.File)
	require.NoError(f, os.MkdirAll(filepath.Dir(path), 0o755))
	f.Fuzz(func(t *testing.T, log []byte) {
		require.NoError(t, os.WriteFile(path, log, 0o644))
		l := eventlog.In(filepath.Dir(path), 7)

		r := l.Replay()
		require.LessOrEqual(t, len(r.Lines), len(want.Lines))
		for i, line := range r.Lines {
			require.Equal(t, want.Lines[i].Hash, line.Hash, "line %d", i+1)
			require.Equal(t, want.Lines[i].Offset, line.Offset, "line %d", i+1)
		}

		rep := l.Check(last, nil)
		if rep.OK && !rep.Interrupted {
			require.True(t, bytes.HasPrefix(log, orig), "a changed log verified: %q", log)
			require.NotContains(t, string(log[len(orig):]), "\n", "lines after the written ones verified")
		}

		head, err := l.CheckHead(last)
		if err == nil && head.Next == nil {
			end := bytes.IndexByte(log[head.Tail.Last.Offset:], '\n')
			require.GreaterOrEqual(t, end, 0)
			lastLine := orig[want.Lines[2].Offset:]
			require.Equal(t, string(lastLine), string(log[head.Tail.Last.Offset:head.Tail.Last.Offset+int64(end)+1]))
		}
	})
}

// threeWrites logs an issue's create and two updates (the second setting
// vars) in dir, as the store does, and returns the log and the issue as
// issue.yaml holds it after the last.
func threeWrites(tb testing.TB, dir string) ([]byte, *record.Issue) {
	tb.Helper()
	l := eventlog.In(dir, 7)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	iss := &record.Issue{ID: 7, Title: "Add login", Slug: "add-login", Flow: "default", Stage: "plan", Version: 1, Created: at, Updated: at,
		History: []record.HistoryEntry{{To: "plan", Kind: record.KindCreate, Actor: "human", At: at}}}
	raw, hash, err := eventlog.Encode("", iss, eventlog.OpCreate, at, iss.History, nil)
	require.NoError(tb, err)
	require.NoError(tb, l.Lines.(chain.Log).AppendEncoded(raw))
	for _, step := range []struct {
		stage string
		vars  map[string]any
	}{{"code", nil}, {"review", map[string]any{"coverage": 81.5, "needs_ui_review": true, "langs": []any{"go"}}}} {
		next := *iss
		next.Version, next.Stage, next.Chain = iss.Version+1, step.stage, ""
		if step.vars != nil {
			next.Vars = step.vars
		}
		added := record.HistoryEntry{From: iss.Stage, To: step.stage, Kind: "advance", Actor: "agent", At: at}
		next.History = append(append([]record.HistoryEntry(nil), iss.History...), added)
		raw, hash, err = eventlog.Encode(hash, &next, eventlog.OpUpdate, at, []record.HistoryEntry{added}, nil)
		require.NoError(tb, err)
		require.NoError(tb, l.Lines.(chain.Log).AppendEncoded(raw))
		iss = &next
	}
	iss.Chain = hash
	// issue.yaml is read back as YAML: vars as a reader parses them.
	iss.Vars = map[string]any{"coverage": 81.5, "needs_ui_review": true, "langs": []any{"go"}}
	data, err := os.ReadFile(filepath.Join(dir, eventlog.File))
	require.NoError(tb, err)
	return data, iss
}
