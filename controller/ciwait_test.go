package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
)

func TestWaitOutcome(t *testing.T) {
	iss := &issues.Issue{ID: 7, HeadSHA: "abc123"}
	for _, tt := range []struct {
		name    string
		o       hooks.Outcome
		want    *WaitOutcome
		wantErr string
	}{
		{name: "passed", o: hooks.Pass(), want: &WaitOutcome{Passed: true, Reason: "CI passed on abc123"}},
		{name: "no CI to wait for", o: hooks.Outcome{Kind: hooks.KindSkipped}, want: &WaitOutcome{Passed: true, Reason: "CI passed on abc123"}},
		{name: "failed, with the feedback the hook wrote",
			o:    hooks.Outcome{Kind: hooks.KindFail, Class: hooks.ClassCIFailed, Reason: "CI failed", Files: map[string]string{"ci_feedback.md": "# CI failed"}},
			want: &WaitOutcome{Reason: "CI failed", Class: hooks.ClassCIFailed, Feedback: "/issues/007/ci_feedback.md"}},
		{name: "a document removed is no feedback",
			o:    hooks.Outcome{Kind: hooks.KindFail, Class: hooks.ClassConflict, Reason: "conflicts", Files: map[string]string{"ci_feedback.md": ""}},
			want: &WaitOutcome{Reason: "conflicts", Class: hooks.ClassConflict}},
		{name: "timed out",
			o:    hooks.Outcome{Kind: hooks.KindFail, Class: hooks.ClassPollingTimeout, Reason: "still running"},
			want: &WaitOutcome{TimedOut: true, Reason: "still running", Class: hooks.ClassPollingTimeout}},
		{name: "bad credentials are no CI verdict",
			o:       hooks.Outcome{Kind: hooks.KindFail, Class: hooks.ClassAuth, Reason: "token rejected"},
			wantErr: "waiting for CI on issue 7: token rejected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := waitOutcome(iss, "/issues/007", tt.o)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
