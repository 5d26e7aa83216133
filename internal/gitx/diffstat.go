package gitx

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
)

// DiffStat is what `git diff --shortstat` counts.
type DiffStat struct {
	Files, Insertions, Deletions int
}

// The parts of a --shortstat line, each left out when its count is zero
// (" 2 files changed, 5 insertions(+)").
var (
	filesRE      = regexp.MustCompile(`(\d+) files? changed`)
	insertionsRE = regexp.MustCompile(`(\d+) insertions?\(\+\)`)
	deletionsRE  = regexp.MustCompile(`(\d+) deletions?\(-\)`)
)

// DiffStat counts what head changed since it left base (git diff
// --shortstat base...head): the PR's diff stat. No textconv filter nor
// external diff driver runs: the counts are of the bytes committed.
func (r *Repo) DiffStat(ctx context.Context, base, head string) (DiffStat, error) {
	for _, rev := range []string{base, head} {
		if err := checkRev(rev); err != nil {
			return DiffStat{}, err
		}
	}
	out, err := r.Run(ctx, "diff", "--shortstat", "--no-textconv", "--no-ext-diff", "--no-renames", base+"..."+head, "--")
	if err != nil {
		return DiffStat{}, err
	}
	var s DiffStat
	for _, part := range []struct {
		re *regexp.Regexp
		n  *int
	}{{filesRE, &s.Files}, {insertionsRE, &s.Insertions}, {deletionsRE, &s.Deletions}} {
		if m := part.re.FindStringSubmatch(out); m != nil {
			if *part.n, err = strconv.Atoi(m[1]); err != nil {
				return DiffStat{}, fmt.Errorf("git diff --shortstat printed %q, not counts", out)
			}
		}
	}
	return s, nil
}
