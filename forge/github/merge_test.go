package github

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// pushBeforeMerge is a transport on which a push lands on the PR's branch
// just before GitHub gets the merge request: after the client read the
// head it expects.
type pushBeforeMerge struct {
	push func()
}

func (p pushBeforeMerge) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/merge") {
		p.push()
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A merge with the head agenttree checked merges that head or nothing:
// the client refuses a head that already moved, and GitHub (given the sha)
// one that moves between the client's look and the merge.
func TestMergeOnlyTheExpectedHead(t *testing.T) {
	ctx := context.Background()
	t.Run("the expected head merges", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha1})
		require.NoError(t, c.Merge(ctx, n, forge.MergeSquash, false, sha1))
		pr, _ := srv.PR(n)
		assert.Equal(t, "merged", pr.State)
	})
	t.Run("a head that moved before the merge", func(t *testing.T) {
		srv := githubtest.New(t)
		c, _ := newClient(t, srv)
		n := srv.AddPR(githubtest.PR{HeadSHA: sha2})
		err := c.Merge(ctx, n, forge.MergeSquash, false, sha1)
		require.ErrorIs(t, err, forge.ErrHeadChanged)
		assert.Contains(t, err.Error(), "expected "+sha1[:12]+", found "+sha2[:12])
		assert.Zero(t, srv.Requests(githubtest.EndpointMergePull), "GitHub is not asked")
		pr, _ := srv.PR(n)
		assert.Equal(t, "open", pr.State)
	})
	t.Run("a head that moves while merging", func(t *testing.T) {
		srv := githubtest.New(t)
		var n int
		c, _ := newClient(t, srv, func(o *Options) {
			o.Transport = pushBeforeMerge{push: func() { srv.SetHead(n, sha2) }}
		})
		n = srv.AddPR(githubtest.PR{HeadSHA: sha1})
		err := c.Merge(ctx, n, forge.MergeSquash, true, sha1)
		require.ErrorIs(t, err, forge.ErrHeadChanged)
		assert.Equal(t, 1, srv.Requests(githubtest.EndpointMergePull), "GitHub refused it")
		pr, _ := srv.PR(n)
		assert.Equal(t, "open", pr.State)
		assert.Equal(t, sha2, pr.HeadSHA)
		_, kept := srv.Branch(pr.Branch)
		assert.True(t, kept, "the branch of an unmerged PR is kept")
	})
}
