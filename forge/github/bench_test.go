package github

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenttree/agenttree/forge/github/githubtest"
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

// BenchmarkFeedbackTick1000 measures the GitHub traffic of one controller
// tick over 1,000 watched PRs, 50 ms away, of which a few got a new
// comment since the last tick: the batched PR states, then Feedback only
// for the PRs whose FeedbackMark moved.
func BenchmarkFeedbackTick1000(b *testing.B) {
	const open, active = 1000, 5
	srv := githubtest.New(b)
	c, _ := newClient(b, srv)
	numbers := make([]int, 0, open)
	for i := range open {
		numbers = append(numbers, srv.AddPR(githubtest.PR{Branch: fmt.Sprintf("agenttree/issue-%d", i)}))
	}
	ctx := context.Background()
	marks := map[int]string{}
	tick := func() {
		prs, err := c.PRs(ctx, numbers)
		if err != nil {
			b.Fatal(err)
		}
		for n, pr := range prs {
			if pr.FeedbackMark == marks[n] {
				continue
			}
			if _, err := c.Feedback(ctx, n); err != nil {
				b.Fatal(err)
			}
			marks[n] = pr.FeedbackMark
		}
	}
	tick() // what was said before is handled
	srv.SetLatency(50 * time.Millisecond)
	srv.ResetCounts()
	ticks := 0
	for b.Loop() {
		for i := range active {
			srv.AddComment(numbers[(ticks*active+i)%open], githubtest.Comment{Author: "alice", Body: "why?"})
		}
		ticks++
		tick()
	}
	b.ReportMetric(float64(srv.TotalRequests())/float64(ticks), "requests/tick")
	for _, n := range srv.Counts() {
		b.Logf("%s: %.1f requests/tick, %.1f answered 304", strings.TrimSpace(n.Endpoint+" "+n.Kind),
			float64(n.Requests)/float64(ticks), float64(n.NotModified)/float64(ticks))
	}
}
