package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
)

// pollEach is what watching each PR with its own requests costs, the way
// a poller without batching does it: one round of forge.PR and
// forge.Checks per PR, workers at a time. It returns the round's requests
// by kind.
func pollEach(ctx context.Context, f forge.Forge, prs []waiting, workers int, srv *githubtest.Server) ([]edge.Count, error) {
	srv.ResetCounts()
	todo := make(chan waiting)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for w := range todo {
				if errs[i] == nil {
					errs[i] = pollOne(ctx, f, w)
				}
			}
		})
	}
	for _, w := range prs {
		todo <- w
	}
	close(todo)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return srv.Counts(), nil
}

func pollOne(ctx context.Context, f forge.Forge, w waiting) error {
	if _, err := f.PR(ctx, w.pr); err != nil {
		return fmt.Errorf("reading PR #%d: %w", w.pr, err)
	}
	if _, err := f.Checks(ctx, w.head); err != nil {
		return fmt.Errorf("reading the checks of PR #%d: %w", w.pr, err)
	}
	return nil
}
