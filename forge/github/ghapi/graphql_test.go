package ghapi

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/githubtest"
)

func TestPullRequestsBatchesGraphQLRequests(t *testing.T) {
	tests := []struct {
		prs          int
		askMissing   bool // also ask for a number that does not exist
		wantRequests int
	}{
		{1, true, 1},
		{PRBatchSize - 1, true, 1},
		{PRBatchSize, false, 1},
		{PRBatchSize, true, 2},
		{120, false, 3}, // ceil(120/50)
		{120, true, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/missing=%v", tt.prs, tt.askMissing), func(t *testing.T) {
			srv := githubtest.New(t)
			c, _ := newClient(t, srv)
			var numbers []int
			for i := range tt.prs {
				sha := fmt.Sprintf("%040x", i+1)
				n := srv.AddPR(githubtest.PR{Branch: fmt.Sprintf("issue-%d", i), HeadSHA: sha})
				id := srv.AddCheckRun(sha, githubtest.CheckRun{Name: "test"})
				srv.CompleteCheckRun(id, "success")
				numbers = append(numbers, n)
			}
			numbers = append(numbers, numbers[0]) // a duplicate costs nothing
			if tt.askMissing {
				numbers = append(numbers, 99999)
			}

			prs, err := c.PullRequests(context.Background(), numbers)
			require.NoError(t, err)
			assert.Len(t, prs, tt.prs, "the missing number is absent")
			assert.Equal(t, tt.wantRequests, srv.Requests(githubtest.EndpointGraphQL))
			assert.Equal(t, tt.wantRequests, srv.TotalRequests(), "nothing but the batched queries")
			for _, n := range numbers[:tt.prs] {
				pr := prs[n]
				require.NotNil(t, pr, "PR #%d", n)
				assert.Equal(t, n, pr.Number)
				assert.Equal(t, "OPEN", pr.State)
				assert.Equal(t, pr.HeadRefOid, pr.LastCommit)
				require.Len(t, pr.CheckRuns, 1)
				assert.Equal(t, pr.HeadRefOid, pr.CheckRuns[0].HeadSHA)
				assert.Equal(t, "completed", pr.CheckRuns[0].Status, "in REST's words")
				assert.Equal(t, "success", *pr.CheckRuns[0].Conclusion)
			}
		})
	}
}

func TestPullRequestsOfAMissingRepository(t *testing.T) {
	srv := githubtest.New(t)
	c, err := New(context.Background(), Options{Repo: "octo/gone", Host: "github.com", Token: srv.Token, BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = c.PullRequests(context.Background(), []int{1})
	require.ErrorIs(t, err, ErrNotFound)
}
