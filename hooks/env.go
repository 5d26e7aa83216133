package hooks

import (
	"context"
	"log/slog"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/stages"
)

// Git is what the PR hooks need of git in an issue's work tree.
type Git interface {
	// Fetch updates the remote-tracking refs of remote.
	Fetch(ctx context.Context, remote string, refspecs ...string) error
	// Push pushes branch to remote; with lease set it refuses to overwrite
	// a remote branch that is not at lease.
	Push(ctx context.Context, remote, branch, lease string) error
	// Rebase rebases the checked-out branch onto onto, aborting cleanly on
	// conflict with an error that satisfies errors.Is(err, forge.ErrConflict).
	Rebase(ctx context.Context, onto string) error
	// ConflictFiles lists the files merging head into base would conflict
	// in; nil when it merges cleanly.
	ConflictFiles(ctx context.Context, base, head string) ([]string, error)
	// RevParse resolves a ref to a commit.
	RevParse(ctx context.Context, ref string) (string, error)
	// IsAncestor reports whether ancestor is reachable from rev.
	IsAncestor(ctx context.Context, ancestor, rev string) (bool, error)
	// CurrentBranch names the checked-out branch.
	CurrentBranch(ctx context.Context) (string, error)
	// RebaseCommit rebases commit head onto onto without touching any
	// branch or work tree, and returns the new commit; a conflict is an
	// error with ConflictingFiles() []string.
	RebaseCommit(ctx context.Context, head, onto string) (string, error)
	// PushCommit sets branch on remote to commit sha, with Push's lease.
	PushCommit(ctx context.Context, remote, sha, branch, lease string) error
	// CountNew counts the commits of rev that base lacks, as changes: a
	// commit base holds rebased does not count.
	CountNew(ctx context.Context, base, rev string) (int, error)
}

// Env is what hooks may use of the world beyond the issue: the forge, git,
// the config's settings and a clock. The engine builds it.
type Env struct {
	Forge  forge.Forge
	Git    func(dir string) Git
	Config *stages.Config
	Remote string
	Now    func() time.Time
	Log    *slog.Logger
	// DryRun asks hooks to change nothing outside the issue: no pushes,
	// rebases, reruns or merges; they report what they would do.
	DryRun bool
}

func (e *Env) now() time.Time {
	if e == nil || e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Env) logger() *slog.Logger {
	if e == nil || e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}
