package github

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/clienttest"
	"github.com/agenttree/agenttree/internal/gittest"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(clienttest.RunIsolated(m))
}

// newClient is the forge of srv's default repository, its waits recorded
// instead of slept.
func newClient(t testing.TB, srv *githubtest.Server, tweak ...func(*Options)) (*Client, *clienttest.Sleeper) {
	t.Helper()
	sl := &clienttest.Sleeper{}
	opts := Options{
		Repo:    srv.Owner + "/" + srv.Name,
		Host:    "github.com",
		Token:   srv.Token,
		BaseURL: srv.URL,
		Sleep:   sl.Sleep,
	}
	for _, f := range tweak {
		f(&opts)
	}
	c, err := New(context.Background(), opts)
	require.NoError(t, err)
	return c, sl
}

const (
	sha1 = "1111111111111111111111111111111111111111"
	sha2 = "2222222222222222222222222222222222222222"
	sha3 = "3333333333333333333333333333333333333333"
)

// requireOutage checks that err says GitHub is unwell and nothing more:
// not a rate limit, a bad token or a missing PR, which callers act on.
func requireOutage(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, ghapi.ErrServer)
	for _, kind := range []error{forge.ErrRateLimit, forge.ErrAuth, forge.ErrNotFound} {
		assert.NotErrorIs(t, err, kind)
	}
}
