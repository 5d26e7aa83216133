package local

import (
	"context"

	"github.com/agenttree/agenttree/forge"
)

// Checks returns the CI check of commit sha, starting CI in the background
// if the commit has no result yet; it never waits for CI (see package ci).
// With no CI command configured the commit has one skipped check, "ci",
// which passes.
func (f *Forge) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	f.requests.Add(1)
	return f.ci.Checks(ctx, sha)
}

// Rerun forgets the results of the given commits' CI, so that the next
// Checks runs it again as a new attempt.
func (f *Forge) Rerun(ctx context.Context, checks []forge.Check) error {
	f.requests.Add(1)
	return f.ci.Rerun(ctx, checks)
}

// Log returns the last n lines (all that is kept when n <= 0) of the
// output of c's attempt (the latest when c has no ID), or "" when there
// is none.
func (f *Forge) Log(ctx context.Context, c forge.Check, n int) (string, error) {
	f.requests.Add(1)
	return f.ci.Log(ctx, c, n)
}
