package examples_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/stages"
)

// The design notes' pr_ready snippets, copied as written (with the stages
// around them added) into stages/load/testdata/designnotes: a CI
// failure steps the issue back to where the snippet says, and its agent
// is told (docs/CONFIG.md, "Spellings from the design notes").
func TestDesignNotesCIFailureStepsBackAndTellsTheAgent(t *testing.T) {
	tests := []struct {
		file string
		// at is where the agent hands the issue on: the stage whose entry
		// work waits for CI, or watches it.
		at   string
		back string
		// told are texts the agent is sent, each in some message.
		told []string
		// script, when set, is the command of the snippet's `run: |`.
		script string
	}{
		{file: "option-a.yaml", at: "pr_ready", back: "implement.feedback", told: []string{"stepped back pr_ready → implement.feedback: CI failed"}},
		{file: "configuration-options.yaml", at: "pr_ready", back: "implement.feedback", told: []string{"stepped back pr_ready → implement.feedback: CI failed"}},
		{file: "option-b.yaml", at: "implementation_review", back: "implement.code",
			told: []string{"CI failed. Please check local:designnotes#1 and fix the issues.", "stepped back implementation_review → implement.code: CI failed"}},
		{file: "option-c.yaml", at: "implementation_review", back: "implement.code", told: []string{"CI failed: poll_pr_status (CI of PR): CI failed on "}},
		// The script alternative's hook-level on_failure, over a script
		// that fails at once (the note's waits for GitHub with gh).
		{file: "script-alternative.yaml", at: "implementation_review", back: "implement.feedback", script: "echo CI failed; exit 1",
			told: []string{"CI checks failed. Please fix and retry."}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			config, err := os.ReadFile(filepath.Join("..", "stages", "load", "testdata", "designnotes", tt.file))
			require.NoError(t, err)
			if tt.script != "" {
				config = withScript(t, config, tt.script)
			}
			r := newRigWith(t, config)
			id := r.create(t, "")
			r.move(t, id, person, "implement.code")
			r.work(t, id, false)
			r.move(t, id, dev, "implement.feedback")
			r.move(t, id, dev, tt.at)

			iss := r.settle(t, id, tt.back)
			back := lastMove(iss, stages.MoveStepBack)
			assert.Equal(t, []string{tt.at, tt.back, "controller"}, []string{back.From, back.To, back.Actor}, describe(iss))
			assert.Contains(t, back.Reason, "CI")
			assert.Nil(t, iss.Escalated, "the agent fixes it, no person is called")

			msgs, err := r.e.Outbox(id).Recent(0)
			require.NoError(t, err)
			var told []string
			for _, m := range msgs {
				if m.To == outbox.ToAgent || m.To == "" {
					told = append(told, m.Text)
				}
			}
			for _, text := range told {
				assert.NotContains(t, text, "{{", "every placeholder is filled in")
			}
			for _, want := range tt.told {
				assert.Truef(t, containsAny(told, want), "the agent is told %q; it was told %q", want, told)
			}
		})
	}
}

func containsAny(texts []string, want string) bool {
	for _, s := range texts {
		if strings.Contains(s, want) {
			return true
		}
	}
	return false
}

// withScript is config with the body of its `run: |` block replaced by
// script, indented as the block is.
func withScript(t *testing.T, config []byte, script string) []byte {
	t.Helper()
	lines := strings.Split(string(config), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "- run: |" {
			continue
		}
		indent := strings.Repeat(" ", len(l)-len(strings.TrimLeft(l, " "))+4)
		end := i + 1
		for end < len(lines) && strings.HasPrefix(lines[end], indent) {
			end++
		}
		out := append(append(slices.Clone(lines[:i+1]), indent+script), lines[end:]...)
		return []byte(strings.Join(out, "\n"))
	}
	require.Fail(t, "no `run: |` block")
	return nil
}
