package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
)

// withGitHub runs body with a fake GitHub server that holds every request
// for latency. githubtest.New wants a testing.TB, whose cleanup closes the
// server; a program has none of its own, so body runs as the one call of
// a testing.Benchmark, whose *testing.B is one. The server is closed when
// body returns.
func withGitHub(latency time.Duration, body func(*githubtest.Server) error) error {
	err := errors.New("the fake GitHub server stopped before the benchmark ran (githubtest.New failed)")
	testing.Benchmark(func(b *testing.B) {
		srv := githubtest.New(b, githubtest.WithLatency(latency))
		// The fake keeps GitHub's 5,000 requests an hour, an hour of the
		// wall clock, while the controller's clock runs hours in minutes:
		// the limit would be spent by the simulation, not by the
		// controller. The figures say how far below it the controller is.
		reset := time.Now().Add(24 * time.Hour)
		srv.SetRateLimit(edge.Core, 1<<30, 1<<30, reset)
		srv.SetRateLimit(edge.GraphQL, 1<<30, 1<<30, reset)
		err = body(srv)
		// One call is all: testing.Benchmark would otherwise call body
		// again, with a larger b.N, to time it.
		b.SkipNow()
	})
	return err
}

// newGitHubForge is the GitHub forge of the fake's repository, as the
// controller opens it. An empty token is looked up the way the CLI does
// it (GH_TOKEN first).
func newGitHubForge(ctx context.Context, url, repo, token string) (*github.Client, error) {
	return github.New(ctx, github.Options{Repo: repo, Host: "github.com", Token: token, BaseURL: url})
}

// fakeRepo is the fake's default repository, owner/name.
func fakeRepo(srv *githubtest.Server) string { return srv.Owner + "/" + srv.Name }
