package local

import (
	"cmp"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/forge/local/ci"
	"github.com/agenttree/agenttree/forge/local/records"
	"github.com/agenttree/agenttree/internal/statedir"
)

// RecordReport is what Verify found of one record.
type RecordReport = records.Report

// Verify checks every record the local forge keeps under the state
// directory stateDir, its PR records by number and then its CI results,
// against their logs (records.Kind.Verify), for `agenttree verify`. It
// needs no repository: a state directory without the local forge's
// records has none to check.
func Verify(stateDir string) ([]RecordReport, error) {
	dir := statedir.Layout{Root: stateDir}.Forge()
	prs, err := prKind(dir).Verify()
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(prs, func(a, b RecordReport) int { return cmp.Compare(prNumberOf(a.Path), prNumberOf(b.Path)) })
	checks, err := ci.Records(filepath.Join(dir, "checks")).Verify()
	if err != nil {
		return nil, err
	}
	return append(prs, checks...), nil
}

// prNumberOf is the number of the PR record at path; a file not named
// for one sorts last.
func prNumberOf(path string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(path), ".yaml"))
	if err != nil {
		return int(^uint(0) >> 1)
	}
	return n
}
