package github

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

func TestFeedback(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	clk := &clock{t: t0}
	srv := githubtest.New(t, githubtest.WithClock(clk.now))
	c, _ := newClient(t, srv)
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	url := fmt.Sprintf("https://github.com/octo/app/pull/%d", n)

	clk.set(at(1))
	bot := srv.AddComment(n, githubtest.Comment{Body: "PR opened by agenttree"})
	clk.set(at(2))
	thread := srv.AddThread(n, githubtest.Thread{Path: "auth/login.go", Line: 42,
		Comments: []githubtest.Comment{{Author: "alice", Body: "this leaks the token"}}})
	clk.set(at(3))
	changes := srv.AddReview(n, githubtest.Review{Author: "alice", State: "CHANGES_REQUESTED", Body: "see the thread"})
	clk.set(at(4))
	srv.AddReview(n, githubtest.Review{Author: "bob", State: "APPROVED", Body: "LGTM"})
	srv.AddReview(n, githubtest.Review{Author: "bob", State: "COMMENTED"}) // line comments only
	srv.AddReview(n, githubtest.Review{Author: "carol", State: "DISMISSED", Body: "old"})
	resolved := srv.AddThread(n, githubtest.Thread{Path: "a.go", Line: 1,
		Comments: []githubtest.Comment{{Author: "bob", Body: "typo"}}})
	srv.ResolveThread(n, resolved)
	clk.set(at(5))
	question := srv.AddComment(n, githubtest.Comment{Author: "carol", Body: "why not OAuth?"})
	clk.set(at(6))
	srv.ReplyToThread(n, thread, githubtest.Comment{Author: "agenttree-bot", Body: "fixed in abc123"})
	srv.AddThread(n, githubtest.Thread{Path: "old.go", Comments: []githubtest.Comment{{Author: "", Body: "outdated"}}})

	feed, err := c.Feedback(context.Background(), n)
	require.NoError(t, err)
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	want := []forge.Feedback{
		{ID: "comment:" + id(bot), Kind: forge.FeedbackComment, Author: "octocat", Body: "PR opened by agenttree",
			URL: fmt.Sprintf("%s#issuecomment-%d", url, bot), At: at(1)},
		{ID: "review:" + id(changes), Kind: forge.FeedbackReview, Author: "alice", Body: "see the thread",
			URL: fmt.Sprintf("%s#pullrequestreview-%d", url, changes), At: at(3)},
		{ID: "comment:" + id(question), Kind: forge.FeedbackComment, Author: "carol", Body: "why not OAuth?",
			URL: fmt.Sprintf("%s#issuecomment-%d", url, question), At: at(5)},
	}
	require.Len(t, feed, 5, "no approval, no empty review, no dismissed one, no resolved thread")
	assert.Equal(t, want, []forge.Feedback{feed[0], feed[1], feed[2]})

	th := feed[3]
	assert.Equal(t, forge.FeedbackThread.ID(thread), th.ID)
	assert.Equal(t, "thread:"+thread, th.ID)
	assert.Equal(t, forge.FeedbackThread, th.Kind)
	assert.Equal(t, "alice", th.Author, "who started it")
	assert.Equal(t, "auth/login.go", th.Path)
	assert.Equal(t, 42, th.Line)
	assert.Equal(t, "alice: this leaks the token\nagenttree-bot: fixed in abc123", th.Body)
	assert.Contains(t, th.URL, url+"#discussion_r")
	assert.Equal(t, at(6), th.At, "its latest comment")

	outdated := feed[4]
	assert.Equal(t, "old.go", outdated.Path)
	assert.Zero(t, outdated.Line)
	assert.Equal(t, "octocat: outdated", outdated.Body)
}

func TestFeedbackPagesAndReuse(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	ctx := context.Background()
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	for i := range 130 {
		srv.AddComment(n, githubtest.Comment{Author: "alice", Body: fmt.Sprintf("c%d", i)})
	}
	for i := range 120 {
		id := srv.AddThread(n, githubtest.Thread{Path: "f.go", Line: i + 1, Comments: []githubtest.Comment{{Body: "t"}}})
		if i%2 == 0 {
			srv.ResolveThread(n, id)
		}
	}

	feed, err := c.Feedback(ctx, n)
	require.NoError(t, err)
	assert.Len(t, feed, 130+60, "every comment, the unresolved threads")
	assert.Equal(t, 2, srv.Requests(githubtest.EndpointListComments))
	assert.Equal(t, 1, srv.Requests(githubtest.EndpointListReviews))
	assert.Equal(t, 2, srv.Queries("ReviewThreads"))

	srv.ResetCounts()
	again, err := c.Feedback(ctx, n)
	require.NoError(t, err)
	assert.Equal(t, feed, again)
	assert.Equal(t, 3, srv.NotModified(githubtest.EndpointListComments, githubtest.EndpointListReviews),
		"unchanged lists come from the ETag cache")
}

// What goes wrong talking to GitHub is a forge error, never feedback and
// never a CI verdict.
func TestFeedbackErrors(t *testing.T) {
	secondary := githubtest.FaultSecondary
	secondary.RetryAfter = 90 // longer than the client waits
	tests := []struct {
		name   string
		fault  githubtest.Fault
		faults int    // how many requests get fault
		token  string // "": the right one
		pr     int    // the PR asked for; 0: the one that exists
		is     error  // nil: an outage (see requireOutage)
	}{
		{name: "missing PR", pr: 4242, is: forge.ErrNotFound},
		{name: "rejected token", token: "wrong", is: forge.ErrAuth},
		{name: "rate limit on the comments", fault: secondary.On(githubtest.EndpointListComments), faults: 1, is: forge.ErrRateLimit},
		{name: "rate limit on the threads", fault: secondary.On(githubtest.EndpointGraphQL), faults: 1, is: forge.ErrRateLimit},
		{name: "reviews down", fault: githubtest.Fault502.On(githubtest.EndpointListReviews), faults: 100},
		{name: "GraphQL down", fault: githubtest.Fault500.On(githubtest.EndpointGraphQL), faults: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubtest.New(t)
			c, _ := newClient(t, srv, func(o *Options) { o.Token = cmp.Or(tt.token, o.Token) })
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
			srv.AddComment(n, githubtest.Comment{Author: "alice", Body: "hm"})
			if tt.faults > 0 {
				srv.FailNext(tt.faults, tt.fault)
			}
			feed, err := c.Feedback(context.Background(), cmp.Or(tt.pr, n))
			assert.Nil(t, feed)
			if tt.is == nil {
				requireOutage(t, err)
				return
			}
			require.ErrorIs(t, err, tt.is)
		})
	}
}

// A passing fault on any of the three reads is retried, as everywhere in
// the client.
func TestFeedbackRetriesPassingFaults(t *testing.T) {
	for _, endpoint := range []string{githubtest.EndpointListComments, githubtest.EndpointListReviews, githubtest.EndpointGraphQL} {
		t.Run(endpoint, func(t *testing.T) {
			srv := githubtest.New(t)
			c, sl := newClient(t, srv)
			n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
			srv.AddComment(n, githubtest.Comment{Author: "alice", Body: "hm"})
			srv.AddThread(n, githubtest.Thread{Path: "a.go", Line: 1, Comments: []githubtest.Comment{{Body: "x"}}})
			srv.FailNext(1, githubtest.Fault502.On(endpoint))
			srv.FailNext(1, githubtest.Fault429.On(endpoint))

			feed, err := c.Feedback(context.Background(), n)
			require.NoError(t, err)
			assert.Len(t, feed, 2)
			assert.Equal(t, 2, srv.FaultsSent())
			assert.GreaterOrEqual(t, len(sl.Waits()), 2, "backed off, then waited out the limit")
		})
	}
}

// The PR's FeedbackMark moves when someone says something new, so that a
// caller lists Feedback only then.
func TestFeedbackMark(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv)
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
	mark := func() string {
		t.Helper()
		prs, err := c.PRs(context.Background(), []int{n})
		require.NoError(t, err)
		return prs[n].FeedbackMark
	}
	marks := []string{mark()}
	var thread string
	for _, say := range []func(){
		func() { srv.AddComment(n, githubtest.Comment{Author: "alice", Body: "hm"}) },
		func() { srv.AddReview(n, githubtest.Review{Author: "bob", State: "COMMENTED", Body: "nit"}) },
		func() {
			thread = srv.AddThread(n, githubtest.Thread{Path: "a.go", Line: 1, Comments: []githubtest.Comment{{Body: "x"}}})
		},
	} {
		say()
		m := mark()
		assert.NotContains(t, marks, m, "moved")
		marks = append(marks, m)
	}
	srv.ResolveThread(n, thread)
	assert.Equal(t, marks[len(marks)-1], mark(), "resolving a thread asks for nothing")
}
