package gitx

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// DiffStat is what `git diff --shortstat` counts, counted from --numstat.
type DiffStat struct {
	Files, Insertions, Deletions int
}

// DiffStat counts what head changed since it left base (git diff
// --numstat base...head): the PR's diff stat. No textconv filter nor
// external diff driver runs: the counts are of the bytes committed.
func (r *Repo) DiffStat(ctx context.Context, base, head string) (DiffStat, error) {
	for _, rev := range []string{base, head} {
		if err := checkRev(rev); err != nil {
			return DiffStat{}, err
		}
	}
	// --numstat's lines are git's format for programs: "added<TAB>deleted<TAB>path",
	// "-" for both counts of a binary file.
	out, err := r.Run(ctx, "diff", "--numstat", "-z", "--no-textconv", "--no-ext-diff", "--no-renames", base+"..."+head, "--")
	if err != nil {
		return DiffStat{}, err
	}
	var s DiffStat
	for _, line := range strings.Split(out, "\x00") {
		added, rest, ok := strings.Cut(line, "\t")
		if !ok {
			continue // after the last record
		}
		deleted, _, _ := strings.Cut(rest, "\t")
		s.Files++
		if added == "-" {
			continue
		}
		a, aerr := strconv.Atoi(added)
		d, derr := strconv.Atoi(deleted)
		if aerr != nil || derr != nil {
			return DiffStat{}, fmt.Errorf("git diff --numstat printed %q, not counts", line)
		}
		s.Insertions += a
		s.Deletions += d
	}
	return s, nil
}
