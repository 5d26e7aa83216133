package cleanup

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/sessions/sandbox"
	"github.com/agenttree/agenttree/sessions/workspace"
)

// unsavedInClone says what work exists only in l's clone, asked of git
// running as the agent (its config and hooks are the agent's): changes
// not committed, or commits on none of the remote's branches as the
// clone last fetched them from the host (fetched again first). A
// container's clone is unsavedInBox's.
func (m cleaner) unsavedInClone(ctx context.Context, repo *gitx.Repo, l *leftover, saved []string, elsewhere string) (refusal, error) {
	if box, ok := sandbox.ContainerOf(l.rec.Sandbox); ok {
		return m.unsavedInBox(ctx, repo, box, l, saved, elsewhere)
	}
	u, err := proc.LookupUser(workspace.SandboxUser(l.rec.Sandbox))
	if err != nil {
		return refusal{}, err
	}
	if err := workspace.OwnedBy(l.clone, &u); err != nil {
		return refusal{}, err
	}
	agent := &gitx.Repo{Dir: l.clone, As: &u}
	todo := "commit, and run `agenttree next` for the controller to take it, or remove it yourself (`rm -rf " + shellQuote(l.clone) + "`)"
	changes, err := agent.Changes(ctx)
	if err != nil {
		return refusal{}, err
	}
	if len(changes) > 0 {
		return refusal{Uncommitted, fmt.Sprintf("uncommitted work in %s (%s); %s", l.clone, files(changes), todo)}, nil
	}
	if err := agent.Fetch(ctx, gitx.DefaultRemote); err != nil {
		return refusal{}, err
	}
	n, err := agent.Unpushed(ctx, "HEAD")
	if err != nil {
		return refusal{}, err
	}
	if n > 0 {
		return refusal{Unpushed, fmt.Sprintf("%s in %s on none of %s; %s", commits(n), l.clone, elsewhere, todo)}, nil
	}
	return refusal{}, nil
}

// unsavedInBox says what work exists only in l's clone, whose agent ran
// in a container of box: changes not committed, asked of git in the
// agent's sandbox, and commits the clone's HEAD has that are on none of
// the remote's branches nor saved, counted in the host's repository
// after fetching HEAD from the clone (as TakeWork does) into a ref of
// its own, deleted afterwards.
func (m cleaner) unsavedInBox(ctx context.Context, repo *gitx.Repo, box sandbox.Box, l *leftover, saved []string, elsewhere string) (refusal, error) {
	if err := workspace.IsDir(l.clone); err != nil {
		return refusal{}, err
	}
	todo := "commit, and run `agenttree next` for the controller to take it, or remove it yourself (`rm -rf " + shellQuote(l.clone) + "`)"
	out, err := box.Git(ctx, l.clone, "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return refusal{}, err
	}
	if changes := gitx.ParseStatus(out); len(changes) > 0 {
		return refusal{Uncommitted, fmt.Sprintf("uncommitted work in %s (%s); %s", l.clone, files(changes), todo)}, nil
	}
	uploadPack, err := box.UploadPack(l.clone)
	if err != nil {
		return refusal{}, err
	}
	ref := "refs/agenttree/clean/" + strconv.Itoa(l.id)
	if err := repo.FetchUntrusted(ctx, l.clone, uploadPack, "+HEAD:"+ref); err != nil {
		return refusal{}, fmt.Errorf("fetch the HEAD of %s: %w", l.clone, err)
	}
	defer func() {
		if err := repo.DeleteRef(context.WithoutCancel(ctx), ref, ""); err != nil {
			m.logger().Warn("delete a ref clean made", "ref", ref, "err", err)
		}
	}()
	n, err := repo.Unpushed(ctx, ref, saved...)
	if err != nil {
		return refusal{}, err
	}
	if n > 0 {
		return refusal{Unpushed, fmt.Sprintf("%s in %s on none of %s; %s", commits(n), l.clone, elsewhere, todo)}, nil
	}
	return refusal{}, nil
}

func (m cleaner) logger() *slog.Logger {
	if m.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Log
}
