package examples_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/outbox"
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
	}{
		{file: "option-a.yaml", at: "pr_ready", back: "implement.feedback", told: []string{"stepped back pr_ready → implement.feedback: CI failed"}},
		{file: "configuration-options.yaml", at: "pr_ready", back: "implement.feedback", told: []string{"stepped back pr_ready → implement.feedback: CI failed"}},
		{file: "option-b.yaml", at: "implementation_review", back: "implement.code",
			told: []string{"CI failed. Please check local:designnotes#1 and fix the issues.", "stepped back implementation_review → implement.code: CI failed"}},
		{file: "option-c.yaml", at: "implementation_review", back: "implement.code", told: []string{"CI failed: poll_pr_status (CI of PR): CI failed on "}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			config, err := os.ReadFile(filepath.Join("..", "stages", "load", "testdata", "designnotes", tt.file))
			require.NoError(t, err)
			r := newRigWith(t, config)
			id := r.create(t, "")
			r.move(t, id, person, "implement.code")
			r.work(t, id, false)
			r.move(t, id, dev, "implement.feedback")
			r.move(t, id, dev, tt.at)

			iss := r.settle(t, id, tt.back)
			back := lastMove(iss, stages.MoveStepBack)
			assert.Equal(t, []string{tt.at, tt.back, "controller"}, []string{back.From, back.To, back.Actor}, describe(iss))
			assert.Contains(t, back.Reason, "CI failed")
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
