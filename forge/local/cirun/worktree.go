package cirun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/gitx"
)

// tempPrefix names the temporary directory of an attempt's work tree;
// RemoveWorktree removes nothing else.
const tempPrefix = "agenttree-ci-"

// NewWorktree makes a temporary directory for an attempt's checkout and
// returns the path of the checkout, which is left for git to make.
func NewWorktree() (string, error) {
	tmp, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		return "", err
	}
	return filepath.Join(tmp, "src"), nil
}

// RemoveWorktree removes an attempt's checkout, and its temporary
// directory, and forgets it in bare. It touches only what NewWorktree
// makes, whatever a hand-edited record or command line says: any other
// path is left alone. It is clean-up, so it goes on when ctx is cancelled
// (a Ctrl-C must not leave git's record of the work tree behind), for at
// most a minute.
func RemoveWorktree(ctx context.Context, bare *gitx.Repo, wt string) {
	if !madeByNewWorktree(wt) {
		return
	}
	tmp := filepath.Dir(wt)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	_ = bare.WorktreeRemove(ctx, wt)
	_ = os.RemoveAll(tmp)
	_ = bare.WorktreePrune(ctx)
}

// madeByNewWorktree reports whether wt is a checkout path NewWorktree
// returns: the only kind the runner removes or hands over.
func madeByNewWorktree(wt string) bool {
	return wt != "" && filepath.Base(wt) == "src" && strings.HasPrefix(filepath.Base(filepath.Dir(wt)), tempPrefix)
}
