package ghapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// answerCalls are the client's reads, each decoding its own shape of
// GitHub's answers (REST and GraphQL).
var answerCalls = []func(context.Context, *Client) error{
	func(ctx context.Context, c *Client) error { _, err := c.CheckRuns(ctx, sha1); return err },
	func(ctx context.Context, c *Client) error { _, err := c.CombinedStatus(ctx, sha1); return err },
	func(ctx context.Context, c *Client) error { _, err := c.Pull(ctx, 1); return err },
	func(ctx context.Context, c *Client) error {
		asked := []int{1, 2}
		prs, err := c.PullRequests(ctx, asked)
		for n, pr := range prs {
			if !slices.Contains(asked, n) || pr.Number != n {
				return errUnasked{n}
			}
		}
		return err
	},
	func(ctx context.Context, c *Client) error { _, err := c.Comments(ctx, 1); return err },
	func(ctx context.Context, c *Client) error { _, err := c.PullReviews(ctx, 1); return err },
	func(ctx context.Context, c *Client) error { _, err := c.ReviewThreads(ctx, 1); return err },
	func(ctx context.Context, c *Client) error { _, err := c.Hooks(ctx); return err },
	func(ctx context.Context, c *Client) error { _, err := c.Deliveries(ctx, 1); return err },
	func(ctx context.Context, c *Client) error { _, err := c.DeliveryPayload(ctx, 1, 1); return err },
	func(ctx context.Context, c *Client) error { _, err := c.DefaultBranch(ctx); return err },
	func(ctx context.Context, c *Client) error { _, err := c.OpenPull(ctx, "issue-1", "main"); return err },
}

type errUnasked struct{ n int }

func (e errUnasked) Error() string { return "a PR not asked for, or under another number" }

// FuzzAnswers gives each of the client's reads any answer, with a 200.
// Seeded with what githubtest's fake GitHub answers each read. Nothing
// panics, and PullRequests keys only the PRs it asked for, each under its
// own number.
func FuzzAnswers(f *testing.F) {
	srv := githubtest.New(f)
	n := srv.AddPR(githubtest.PR{HeadSHA: sha1, Title: "Add login"})
	srv.AddPR(githubtest.PR{HeadSHA: sha2})
	srv.AddCheckRun(sha1, githubtest.CheckRun{Name: "test"})
	srv.AddComment(n, githubtest.Comment{Author: "alice", Body: "why?"})
	srv.AddReview(n, githubtest.Review{Author: "bob", State: "CHANGES_REQUESTED", Body: "no"})
	srv.AddThread(n, githubtest.Thread{Path: "f.go", Line: 3, Comments: []githubtest.Comment{{Author: "carol", Body: "and this?"}}})
	rec := &recorder{next: http.DefaultTransport}
	c, _ := newClient(f, srv, func(o *Options) { o.Transport = rec })
	for i, call := range answerCalls {
		rec.last = nil
		_ = call(context.Background(), c)
		f.Add(uint8(i), rec.last)
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		c, err := New(context.Background(), Options{Repo: "octo/app", Host: "github.com", Token: "t",
			Transport: answer(body), Sleep: func(context.Context, time.Duration) error { return nil }})
		require.NoError(t, err)
		err = answerCalls[int(which)%len(answerCalls)](context.Background(), c)
		require.NotErrorAs(t, err, new(errUnasked))
	})
}

// recorder keeps the last answer's body.
type recorder struct {
	next http.RoundTripper
	last []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.last, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(r.last))
	return resp, nil
}

// answer answers every request with body.
type answer []byte

func (a answer) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: io.NopCloser(bytes.NewReader(a)),
		ContentLength: int64(len(a)), Request: req}, nil
}
