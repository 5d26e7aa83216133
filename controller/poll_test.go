package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/engine/issues"
)

func TestInBatchesHoldsAtMostFiftyPRsEach(t *testing.T) {
	var due []dueIssue
	for i := range 130 {
		pr := i + 1
		if i%10 == 0 {
			pr = 0 // no PR yet: nothing to fetch
		}
		due = append(due, dueIssue{iss: &issues.Issue{ID: i + 1, PRNumber: pr}, act: true})
	}
	parts := inBatches(due)
	total := 0
	for _, p := range parts {
		n := 0
		for _, d := range p.due {
			if d.iss.PRNumber > 0 {
				n++
			}
		}
		assert.LessOrEqual(t, n, batchSize)
		assert.Equal(t, total, p.start, "the parts follow one another")
		total += len(p.due)
	}
	assert.Equal(t, len(due), total, "every due issue is in a part")
	assert.Len(t, parts, 3, "117 PRs are 3 batches")
}
