package gitx_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

// DiffStat counts what a branch changed since it left its base, not
// what the base did meanwhile.
func TestDiffStat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, clone := gittest.NewRemote(t)
	r := &gitx.Repo{Dir: clone}
	gittest.Run(t, clone, "checkout", "-q", "-b", "issue-3")
	gittest.Commit(t, clone, "a.txt", "one\n2\nthree\nfour\n", "edit a")
	gittest.Commit(t, clone, "b.txt", "new\n", "add b")
	gittest.Run(t, clone, "checkout", "-q", "main")
	gittest.Commit(t, clone, "c.txt", "on main since\n", "main moves on")

	tests := []struct {
		name, base, head string
		want             gitx.DiffStat
		wantErr          bool
	}{
		{name: "the branch's changes only", base: "main", head: "issue-3", want: gitx.DiffStat{Files: 2, Insertions: 3, Deletions: 1}},
		{name: "one file, insertions only", base: "issue-3", head: "main", want: gitx.DiffStat{Files: 1, Insertions: 1}},
		{name: "nothing changed", base: "main", head: "main"},
		{name: "no such ref", base: "main", head: "refs/heads/nowhere", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.DiffStat(ctx, tt.base, tt.head)
			if tt.wantErr {
				var gerr *gitx.Error
				require.ErrorAs(t, err, &gerr, "git's own error, naming the command")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := r.DiffStat(ctx, "main", "--output=/tmp/x")
	assert.ErrorContains(t, err, "bad git revision", "an option is not a revision")
}
