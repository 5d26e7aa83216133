package prhead_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func TestStaleSendsANewHeadBackThroughTheStageThatRanCI(t *testing.T) {
	reg := builtin.Registry()
	cfg, err := load.File(testpipeline.Path(t, "local-forge"), reg)
	require.NoError(t, err)
	flow, err := cfg.Flow("")
	require.NoError(t, err)
	tests := []struct {
		name, stage, head string
		pr                int
		want              string // the reason's words; "" for no recheck
	}{
		{name: "the head CI passed on", stage: "review", head: "aaaaaaa", pr: 1},
		{name: "a push during review", stage: "review", head: "bbbbbbb", pr: 1, want: "pushed during review"},
		{name: "a push after the review", stage: "accepted", head: "bbbbbbb", pr: 1, want: "pushed after the review at review"},
		{name: "no review before the stage", stage: "pr", head: "bbbbbbb", pr: 1},
		{name: "no PR", stage: "review", head: "bbbbbbb"},
		{name: "no head reported", stage: "review", pr: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node, ok := cfg.Node(tt.stage)
			require.True(t, ok)
			iss := &issues.Issue{ID: 7, Stage: tt.stage, PRNumber: tt.pr, Outputs: map[string]string{stages.CIPassedSHA: "aaaaaaa"}}
			rc := prhead.Stale(reg, flow, node, iss, tt.head)
			if tt.want == "" {
				assert.Nil(t, rc)
				return
			}
			require.NotNil(t, rc)
			assert.Equal(t, "pr", rc.To.Path, "the stage whose hooks check CI")
			assert.Equal(t, "review", rc.Review.Path)
			assert.Contains(t, rc.Reason, tt.want)
			rc.ForPerson(iss.ID)
			assert.Contains(t, rc.Todo, "`agenttree approve 7`")
		})
	}
}

func TestCursorStartsTheEntryAgainOnANewHead(t *testing.T) {
	cfg, err := load.File(testpipeline.Path(t, "local-forge"), builtin.Registry())
	require.NoError(t, err)
	pr, _ := cfg.Node("pr")
	tests := []struct {
		name     string
		pending  *issues.EntryPending
		head     string
		wantDone int
		moved    bool
	}{
		{name: "nothing pending", head: "aaa"},
		{name: "on the head it passed on", pending: &issues.EntryPending{Stage: "pr", Done: 1, Head: "aaa"}, head: "aaa", wantDone: 1},
		{name: "a record without a head", pending: &issues.EntryPending{Stage: "pr", Done: 1}, head: "aaa", wantDone: 1},
		{name: "the head moved", pending: &issues.EntryPending{Stage: "pr", Done: 1, Head: "aaa"}, head: "bbb", moved: true},
		{name: "another stage's record", pending: &issues.EntryPending{Stage: "review", Done: 1, Head: "aaa"}, head: "bbb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iss := &issues.Issue{HeadSHA: tt.head, EntryPending: tt.pending}
			c, why := prhead.CursorOf(iss, pr, 1)
			assert.Equal(t, tt.wantDone, c.Done)
			assert.Equal(t, tt.head, c.On)
			if tt.moved {
				assert.Contains(t, why, "entry runs again from its first hook")
			} else {
				assert.Empty(t, why)
			}
		})
	}
}
