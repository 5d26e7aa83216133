package cmdutil

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agenttree/agenttree/internal/gitx"
)

// ParseID reads an issue id argument: a number, "#" before it allowed.
func ParseID(s string) (int, error) {
	id, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%q is not an issue id; ids are numbers (see `agenttree issue list`)", s)
	}
	return id, nil
}

// branchIDRE is compiled on first use: most commands name their issue.
var branchIDRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:.*/)?(?:issue-0*([1-9][0-9]*)(?:$|[-_/])|0*([1-9][0-9]*)-)`)
})

// issueFromBranch reads an issue id out of a branch name such as
// `issue-42`, `issue-042-login` or `042-login`.
func issueFromBranch(branch string) (int, bool) {
	m := branchIDRE().FindStringSubmatch(branch)
	if m == nil {
		return 0, false
	}
	s := m[1]
	if s == "" {
		s = m[2]
	}
	id, err := strconv.Atoi(s)
	return id, err == nil
}

// ResolveIssue finds the issue a command is about: -i, AGENTTREE_ISSUE,
// then the current git branch.
func (a *App) ResolveIssue(ctx context.Context, flag string, dir string) (int, error) {
	if flag != "" {
		return ParseID(flag)
	}
	if env := a.Getenv("AGENTTREE_ISSUE"); env != "" {
		id, err := ParseID(env)
		if err != nil {
			return 0, fmt.Errorf("AGENTTREE_ISSUE: %w", err)
		}
		return id, nil
	}
	branch, err := (&gitx.Repo{Dir: dir}).CurrentBranch(ctx)
	if err == nil {
		if id, ok := issueFromBranch(branch); ok {
			return id, nil
		}
	}
	return 0, fmt.Errorf("which issue? pass -i ID, set AGENTTREE_ISSUE, or work on a branch named like issue-42 (current branch: %q)", branch)
}
