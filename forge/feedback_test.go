package forge_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/forge"
)

func TestFeedbackOrderAndThreads(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	th := forge.Feedback{ID: "thread:b", Kind: forge.FeedbackThread, At: t0}
	th.AddThreadComment("alice", "why?", t0.Add(time.Minute))
	th.AddThreadComment("bob", "because\nof this", t0.Add(3*time.Minute))
	th.AddThreadComment("alice", "late clock", t0.Add(2*time.Minute))
	assert.Equal(t, "alice: why?\nbob: because\nof this\nalice: late clock", th.Body)
	assert.Equal(t, t0.Add(3*time.Minute), th.At, "the latest comment")

	fb := []forge.Feedback{
		th,
		{ID: "comment:2", At: t0.Add(time.Minute)},
		{ID: "comment:1", At: t0.Add(time.Minute)},
		{ID: "review:9", At: t0},
	}
	forge.SortFeedback(fb)
	var ids []string
	for _, f := range fb {
		ids = append(ids, f.ID)
	}
	assert.Equal(t, []string{"review:9", "comment:1", "comment:2", "thread:b"}, ids, "oldest first, ties by ID")
}
