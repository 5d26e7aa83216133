package github

import (
	"context"
	"fmt"
	"testing"

	"github.com/agenttree/agenttree/internal/github/githubtest"
)

// BenchmarkBatchedPRState measures one controller refresh: the state of
// 1,000 open PRs, each with three check runs and a commit status.
func BenchmarkBatchedPRState1000(b *testing.B) {
	const open = 1000
	srv := githubtest.New(b)
	c, _ := newClient(b, srv)
	numbers := make([]int, 0, open)
	for i := range open {
		sha := fmt.Sprintf("%040x", i+1)
		n := srv.AddPR(githubtest.PR{Branch: fmt.Sprintf("agenttree/issue-%d", i), HeadSHA: sha})
		for _, name := range []string{"build", "test", "lint"} {
			id := srv.AddCheckRun(sha, githubtest.CheckRun{Name: name})
			if i%3 == 0 {
				srv.CompleteCheckRun(id, "success")
			}
		}
		srv.AddStatus(sha, "ci/external", "pending", "")
		numbers = append(numbers, n)
	}
	ctx := context.Background()
	srv.ResetCounts()
	b.ResetTimer()
	for b.Loop() {
		prs, err := c.PRs(ctx, numbers)
		if err != nil {
			b.Fatal(err)
		}
		if len(prs) != open || len(prs[numbers[0]].Checks) != 4 {
			b.Fatalf("got %d PRs", len(prs))
		}
	}
	b.ReportMetric(float64(srv.TotalRequests())/float64(b.N), "requests/op")
}
