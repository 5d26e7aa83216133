package issues_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// moved is an issue with four versions: created, then three moves.
func moved(t *testing.T) (*issues.Store, *issues.Issue) {
	t.Helper()
	s, iss := newStore(t)
	for _, to := range []string{"implement.review", "implement.code", "implement.review"} {
		var err error
		iss, err = s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error {
			cur.History = append(cur.History, issues.HistoryEntry{From: cur.Stage, To: to, Kind: stages.MoveAdvance, Actor: "agent", At: cur.Updated})
			cur.Stage = to
			return nil
		})
		require.NoError(t, err)
	}
	require.Equal(t, 4, iss.Version)
	return s, iss
}

// files are an issue's issue.yaml and events.jsonl, byte for byte.
type files struct{ issue, events []byte }

func snapshot(t *testing.T, s *issues.Store, id int) files {
	t.Helper()
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(s.HostDir(id), name))
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		return data
	}
	return files{issue: read("issue.yaml"), events: read("events.jsonl")}
}

func rewrite(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(edit(string(data))), 0o644))
}

// logLines splits events.jsonl into its lines, line feeds kept.
func logLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	return lines[:len(lines)-1]
}

// Every attack on an issue's files is detected; the ones that change
// what the engine acts on (issue.yaml, the log's end) are refused by
// every command, which then changes nothing; the ones on the log's past
// lines are reported by Verify. Repair restores the state before.
func TestAttacksAreDetected(t *testing.T) {
	for _, tt := range []struct {
		name   string
		attack func(t *testing.T, issueYAML, events string)
		// refused: Lock refuses the issue (else only Verify reports it).
		refused bool
		problem string
		changes []string
	}{
		{
			name: "edit the stage",
			attack: func(t *testing.T, issueYAML, _ string) {
				rewrite(t, issueYAML, func(s string) string { return strings.Replace(s, "stage: implement.review", "stage: accepted", 1) })
			},
			refused: true, problem: "issue.yaml differs from the last state", changes: []string{"stage: implement.review → accepted"},
		},
		{
			name: "add an entry_pending",
			attack: func(t *testing.T, issueYAML, _ string) {
				rewrite(t, issueYAML, func(s string) string { return s + "entry_pending:\n  stage: accepted\n" })
			},
			refused: true, problem: "issue.yaml differs", changes: []string{"entry_pending added"},
		},
		{
			name: "edit the stage and the history to match",
			attack: func(t *testing.T, issueYAML, _ string) {
				rewrite(t, issueYAML, func(s string) string {
					s = strings.Replace(s, "stage: implement.review", "stage: accepted", 1)
					return strings.Replace(s, "history:\n", "history:\n    - from: implement.review\n      to: accepted\n      kind: approve\n      actor: human\n      at: 2024-01-01T00:00:00Z\n", 1)
				})
			},
			refused: true, problem: "issue.yaml differs", changes: []string{"stage: implement.review → accepted", "history: 4 → 5 entries"},
		},
		{
			name: "delete the chain field",
			attack: func(t *testing.T, issueYAML, _ string) {
				rewrite(t, issueYAML, func(s string) string { return s[:strings.Index(s, "chain:")] })
			},
			refused: true, problem: "issue.yaml has no chain",
		},
		{
			name: "delete events.jsonl",
			attack: func(t *testing.T, _, events string) {
				require.NoError(t, os.Remove(events))
			},
			refused: true, problem: "events.jsonl is missing",
		},
		{
			name: "delete the chain field and events.jsonl, to pass as an issue from before chains",
			attack: func(t *testing.T, issueYAML, events string) {
				rewrite(t, issueYAML, func(s string) string {
					return strings.Replace(s[:strings.Index(s, "chain:")], "stage: implement.review", "stage: accepted", 1)
				})
				require.NoError(t, os.Remove(events))
			},
			refused: true, problem: "no chain and no events.jsonl",
		},
		{
			name: "delete the chain field and the layout marker, and put a log of the old kind, to pass as an issue from before chains",
			attack: func(t *testing.T, issueYAML, events string) {
				rewrite(t, issueYAML, func(s string) string {
					return strings.Replace(s[:strings.Index(s, "chain:")], "stage: implement.review", "stage: accepted", 1) +
						"entry_pending:\n    stage: accepted\n    from: implement.review\n"
				})
				require.NoError(t, os.WriteFile(events, []byte(`{"legacy":true}`+"\n"), 0o644))
				require.NoError(t, os.Remove(filepath.Join(filepath.Dir(issueYAML), "..", "..", "layout")))
			},
			refused: true, problem: "as if it came from before chains",
		},
		{
			name: "cut the last line off the log",
			attack: func(t *testing.T, _, events string) {
				lines := logLines(t, events)
				require.NoError(t, os.WriteFile(events, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644))
			},
			refused: true, problem: "lines were cut off the log",
		},
		{
			name: "roll issue.yaml back to an earlier version",
			attack: func(t *testing.T, issueYAML, events string) {
				lines := logLines(t, events)
				var ev struct {
					Hash string `json:"hash"`
				}
				require.NoError(t, json.Unmarshal([]byte(lines[1]), &ev))
				rewrite(t, issueYAML, func(s string) string {
					s = strings.Replace(s, "version: 4", "version: 2", 1)
					return s[:strings.Index(s, "chain:")] + "chain: " + ev.Hash + "\n"
				})
			},
			refused: true, problem: "issue.yaml's chain does not name the last line", changes: []string{"version: 4 → 2"},
		},
		{
			name: "forge a last line without recomputing its hash",
			attack: func(t *testing.T, issueYAML, events string) {
				lines := logLines(t, events)
				last := lines[len(lines)-1]
				forged := strings.Replace(strings.Replace(last, `"version":4`, `"version":5`, 1), `"stage":"implement.review"`, `"stage":"accepted"`, 1)
				f, err := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteString(forged)
				require.NoError(t, err)
				require.NoError(t, f.Close())
				rewrite(t, issueYAML, func(s string) string {
					return strings.Replace(strings.Replace(s, "stage: implement.review", "stage: accepted", 1), "version: 4", "version: 5", 1)
				})
			},
			refused: true, problem: "its hash does not match its content",
		},
		{
			name: "edit a past line of the log",
			attack: func(t *testing.T, _, events string) {
				rewrite(t, events, func(s string) string { return strings.Replace(s, `"actor":"agent"`, `"actor":"human"`, 1) })
			},
			problem: "line 2: its hash does not match its content",
		},
		{
			name: "reorder past lines of the log",
			attack: func(t *testing.T, _, events string) {
				lines := logLines(t, events)
				lines[1], lines[2] = lines[2], lines[1]
				require.NoError(t, os.WriteFile(events, []byte(strings.Join(lines, "")), 0o644))
			},
			problem: "line 2: it does not follow the line before it",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, iss := moved(t)
			tt.attack(t, filepath.Join(s.HostDir(iss.ID), "issue.yaml"), filepath.Join(s.HostDir(iss.ID), "events.jsonl"))
			attacked := snapshot(t, s, iss.ID)
			s, err := issues.Open(s.Root()) // opening the store again adopts nothing
			require.NoError(t, err)
			assert.Equal(t, attacked, snapshot(t, s, iss.ID))

			rep, err := s.Verify(iss.ID)
			require.NoError(t, err)
			assert.False(t, rep.OK, "verify: %+v", rep)
			assert.Contains(t, strings.Join(rep.Problems, "\n"), tt.problem)
			for _, c := range tt.changes {
				assert.Contains(t, rep.Changes, c)
			}

			_, err = s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error {
				cur.Stage = "merged"
				return nil
			})
			if tt.refused {
				var te *issues.TamperedError
				require.ErrorAs(t, err, &te)
				assert.Equal(t, iss.ID, te.ID)
				assert.Contains(t, err.Error(), "agenttree verify 1")
				assert.Contains(t, err.Error(), "agenttree repair 1")
				for _, c := range tt.changes {
					assert.Contains(t, err.Error(), c)
				}
				assert.Equal(t, attacked, snapshot(t, s, iss.ID), "a refused command changes nothing")
			}

			done, err := s.Repair(context.Background(), iss.ID, false)
			if tt.name == "delete events.jsonl" || strings.HasPrefix(tt.name, "delete the chain field and ") {
				require.ErrorIs(t, err, issues.ErrNothingToRestore)
				assert.Contains(t, err.Error(), "--adopt")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, issues.RepairRestored, done.Action)
			rep, err = s.Verify(iss.ID)
			require.NoError(t, err)
			assert.True(t, rep.OK, "after repair: %+v", rep)
			got, err := s.Get(iss.ID)
			require.NoError(t, err)
			if tt.refused && tt.name != "cut the last line off the log" {
				assert.Equal(t, "implement.review", got.Stage)
				assert.Len(t, got.History, 4)
			}
			assert.Greater(t, got.Version, iss.Version, "a new version: nobody acts on what they read before")
		})
	}
}

// A repair restores the last consistent state, keeps the log
// append-only (what it takes off goes aside, named), records what it
// undid, and repairing again changes nothing.
func TestRepairRestoresAndIsIdempotent(t *testing.T) {
	s, iss := moved(t)
	dir := s.HostDir(iss.ID)
	// An edit of issue.yaml, and a forged line after the good ones.
	rewrite(t, filepath.Join(dir, "issue.yaml"), func(s string) string {
		return strings.Replace(s, "stage: implement.review", "stage: accepted", 1)
	})
	lines := logLines(t, filepath.Join(dir, "events.jsonl"))
	forged := strings.Replace(lines[len(lines)-1], `"version":4`, `"version":5`, 1)
	rewrite(t, filepath.Join(dir, "events.jsonl"), func(s string) string { return s + forged })

	done, err := s.Repair(context.Background(), iss.ID, false)
	require.NoError(t, err)
	assert.Equal(t, issues.RepairRestored, done.Action)
	assert.Equal(t, 4, done.Restored)
	assert.Equal(t, 5, done.Version)
	assert.Contains(t, done.Undone, "stage: implement.review → accepted")
	assert.Equal(t, filepath.Join(dir, "events.set-aside.jsonl"), done.SetAside)
	assert.Equal(t, 1, done.SetAsideLines)
	aside, err := os.ReadFile(done.SetAside)
	require.NoError(t, err)
	assert.Equal(t, forged, string(aside), "the forged line is kept aside, not deleted")

	got, err := s.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "implement.review", got.Stage)
	assert.Equal(t, 5, got.Version)
	after := logLines(t, filepath.Join(dir, "events.jsonl"))
	require.Len(t, after, 5)
	assert.Equal(t, lines, after[:4], "the good lines are untouched")
	var ev issues.Event
	require.NoError(t, json.Unmarshal([]byte(after[4]), &ev))
	assert.Equal(t, issues.OpRepair, ev.Op)
	require.NotNil(t, ev.Repair)
	assert.Equal(t, 4, ev.Repair.Restored)
	assert.Contains(t, ev.Repair.Undone, "stage: implement.review → accepted")

	snap := snapshot(t, s, iss.ID)
	again, err := s.Repair(context.Background(), iss.ID, false)
	require.NoError(t, err)
	assert.Equal(t, issues.RepairNone, again.Action)
	assert.Equal(t, snap, snapshot(t, s, iss.ID), "a second repair changes nothing")

	_, err = s.Update(context.Background(), iss.ID, 5, func(cur *issues.Issue) error { return nil })
	require.NoError(t, err, "the issue is usable again")
}

// With nothing in the log to restore, a person adopts issue.yaml as it
// is: a new chain starts from it, the old log kept aside.
func TestRepairAdopt(t *testing.T) {
	s, iss := moved(t)
	events := filepath.Join(s.HostDir(iss.ID), "events.jsonl")
	old, err := os.ReadFile(events)
	require.NoError(t, err)
	rewrite(t, events, func(s string) string { return "garbage\n" + s })

	_, err = s.Repair(context.Background(), iss.ID, false)
	require.ErrorIs(t, err, issues.ErrNothingToRestore)
	done, err := s.Repair(context.Background(), iss.ID, true)
	require.NoError(t, err)
	assert.Equal(t, issues.RepairAdopted, done.Action)
	assert.Equal(t, 5, done.SetAsideLines)
	aside, err := os.ReadFile(done.SetAside)
	require.NoError(t, err)
	assert.Equal(t, "garbage\n"+string(old), string(aside))

	rep, err := s.Verify(iss.ID)
	require.NoError(t, err)
	assert.True(t, rep.OK, "%+v", rep)
	assert.Contains(t, rep.Notes[0], "adopt")
	again, err := s.Repair(context.Background(), iss.ID, true)
	require.NoError(t, err)
	assert.Equal(t, issues.RepairNone, again.Action, "adopting a consistent issue changes nothing")
}

// A crash between the log's line and issue.yaml's replacement does not
// look like tampering: the next Lock finishes the write. A crash inside
// the append leaves an incomplete line, which the next Lock drops.
func TestCrashBetweenLogAndIssueYAMLIsFinished(t *testing.T) {
	for _, tt := range []struct {
		name  string
		crash func(t *testing.T, s *issues.Store, iss *issues.Issue) (want int)
	}{
		{
			name: "after the line, before issue.yaml",
			crash: crashBeforeIssueYAML(func(cur *issues.Issue) {
				cur.Stage = "accepted"
				cur.History = append(cur.History, issues.HistoryEntry{From: "implement.review", To: "accepted", Kind: stages.MoveApprove, Actor: "human"})
			}),
		},
		{
			name: "after the line of a change without history, before issue.yaml",
			crash: crashBeforeIssueYAML(func(cur *issues.Issue) {
				cur.Outputs = map[string]string{"pr_url": "x"}
			}),
		},
		{
			name: "inside the append",
			crash: func(t *testing.T, s *issues.Store, iss *issues.Issue) int {
				f, err := os.OpenFile(filepath.Join(s.HostDir(iss.ID), "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteString(`{"prev":"0123","issue":1,"vers`)
				require.NoError(t, err)
				require.NoError(t, f.Close())
				return iss.Version
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, iss := moved(t)
			want := tt.crash(t, s, iss)
			rep, err := s.Verify(iss.ID)
			require.NoError(t, err)
			assert.True(t, rep.OK, "a crash is not tampering: %+v", rep)

			tx, got, err := s.Begin(context.Background(), iss.ID)
			require.NoError(t, err)
			tx.Unlock()
			assert.Equal(t, want, got.Version)
			rep, err = s.Verify(iss.ID)
			require.NoError(t, err)
			assert.True(t, rep.OK, "%+v", rep)
			assert.False(t, rep.Interrupted || rep.Torn, "the next Lock finished it: %+v", rep)
			onDisk, err := s.Get(iss.ID)
			require.NoError(t, err)
			assert.Equal(t, got, onDisk)
		})
	}
}

// crashBeforeIssueYAML makes change, then puts issue.yaml back as it was:
// what a crash after the log's line and before issue.yaml's replacement
// leaves.
func crashBeforeIssueYAML(change func(*issues.Issue)) func(*testing.T, *issues.Store, *issues.Issue) int {
	return func(t *testing.T, s *issues.Store, iss *issues.Issue) int {
		old := snapshot(t, s, iss.ID).issue
		_, err := s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error {
			change(cur)
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(s.HostDir(iss.ID), "issue.yaml"), old, 0o644))
		return iss.Version + 1
	}
}

// Each write of issue.yaml is one line of events.jsonl, with the issue's
// id, version, the history entries it added and the state it produced;
// the lines' entries are the issue's history.
func TestEventsAreOneLinePerWrite(t *testing.T) {
	s, iss := moved(t)
	iss, err := s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error {
		cur.Outputs = map[string]string{"pr_url": "https://example.com/1"}
		return nil
	})
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(s.HostDir(iss.ID), "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var (
		history  []issues.HistoryEntry
		versions []int
		last     map[string]any
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev issues.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		last = nil
		require.NoError(t, json.Unmarshal(sc.Bytes(), &last))
		history = append(history, ev.Entries...)
		versions = append(versions, ev.Version)
		assert.Equal(t, iss.ID, ev.Issue)
		assert.Nil(t, ev.State.History, "a line's state leaves the history to the entries")
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5}, versions)
	assert.Equal(t, iss.History, history)
	assert.Equal(t, last["hash"], iss.Chain, "issue.yaml carries the chain's head")
	assert.Contains(t, last, "prev")
	assert.Contains(t, last, "state_hash")
	assert.NotContains(t, last, "entries", "a write without history adds no entries")
}

// Reads for display check the head as Lock does: a tampered issue is
// an error, never shown as if agenttree had written it.
func TestGetRefusesATamperedIssue(t *testing.T) {
	s, iss := moved(t)
	rewrite(t, filepath.Join(s.HostDir(iss.ID), "issue.yaml"), func(s string) string {
		return strings.Replace(s, "stage: implement.review", "stage: accepted", 1)
	})
	_, err := s.Get(iss.ID)
	var te *issues.TamperedError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, []string{"stage: implement.review → accepted"}, te.Changes)
	list, err := s.List()
	require.ErrorAs(t, err, &te, "List says which issue is tampered")
	assert.Empty(t, list)

	require.NoError(t, os.Remove(filepath.Join(s.HostDir(iss.ID), "issue.yaml")))
	_, err = s.Get(iss.ID)
	require.ErrorAs(t, err, &te, "a removed issue.yaml does not hide the issue")
	assert.Contains(t, err.Error(), "its issue.yaml is missing (its events.jsonl holds version 4)")
}

// Values a YAML round trip could change (numbers in vars) do not look
// like tampering.
func TestVarsRoundTripIsNoTampering(t *testing.T) {
	s, iss := newStore(t)
	iss, err := s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error {
		cur.Vars = map[string]any{"n": int64(3), "f": 2.5, "big": 1e21, "b": true, "s": "yes", "list": []string{"a"}, "nested": map[string]int{"x": 1}}
		return nil
	})
	require.NoError(t, err)
	_, err = s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error { return nil })
	require.NoError(t, err)
	rep, err := s.Verify(iss.ID)
	require.NoError(t, err)
	assert.True(t, rep.OK, "%+v", rep)
}

func TestTamperedErrorBoundsWhatItLists(t *testing.T) {
	err := &issues.TamperedError{ID: 3, Problem: "issue.yaml differs", Changes: []string{"a", "b", "c", "d", "e", "f", "g", "h"}}
	assert.Contains(t, err.Error(), "(a; b; c; d; e; f; 2 more)")
	assert.True(t, bytes.Contains([]byte(err.Error()), []byte("agenttree repair 3")))
}

// A Create a crash stopped between its line and issue.yaml reads as
// created (never silently absent from lists), and the next Lock finishes
// it. An issue.yaml missing after later writes is damage.
func TestCreateCutShortIsFinished(t *testing.T) {
	s, iss := newStore(t)
	require.NoError(t, os.Remove(filepath.Join(s.HostDir(iss.ID), "issue.yaml")))
	read, err := s.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, iss.Title, read.Title)
	list, err := s.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	tx, got, err := s.Begin(context.Background(), iss.ID)
	require.NoError(t, err)
	tx.Unlock()
	assert.Equal(t, iss.Title, got.Title)
	onDisk, err := s.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, got, onDisk)
	assert.FileExists(t, filepath.Join(s.HostDir(iss.ID), "issue.yaml"))

	_, err = s.Update(context.Background(), iss.ID, got.Version, func(cur *issues.Issue) error { cur.Title = "later"; return nil })
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(s.HostDir(iss.ID), "issue.yaml")))
	_, err = s.Get(iss.ID)
	var tampered *issues.TamperedError
	require.ErrorAs(t, err, &tampered)
	assert.Contains(t, err.Error(), "issue.yaml is missing")
}

// Another issue's files, consistent among themselves, are not this
// issue's.
func TestAnotherIssuesFilesAreRefused(t *testing.T) {
	s, first := newStore(t)
	second, err := s.Create(context.Background(), &issues.Issue{Title: "Second", Slug: "second", Flow: "default", Stage: "accepted"}, "human")
	require.NoError(t, err)
	for _, name := range []string{"issue.yaml", "events.jsonl"} {
		data, err := os.ReadFile(filepath.Join(s.HostDir(second.ID), name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(s.HostDir(first.ID), name), data, 0o644))
	}
	_, err = s.Get(first.ID)
	var te *issues.TamperedError
	require.ErrorAs(t, err, &te)
	assert.Contains(t, err.Error(), "its issue.yaml says it is issue 2")
	_, err = s.Update(context.Background(), first.ID, 1, func(*issues.Issue) error { return nil })
	require.ErrorAs(t, err, &te)
}
