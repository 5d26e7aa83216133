package pr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
)

// A record of the local forge changed outside agenttree (a CI result
// written by hand, an approval added to a PR record) is no verdict on the
// code: every PR hook that meets it stops the issue for a person
// (escalate, ClassTampered), naming the record, what changed and the
// ways out; none fails it back to the agent or waits it out.
func TestTamperedRecordEscalates(t *testing.T) {
	for _, tt := range []struct {
		name   string
		attack func(t *testing.T, l *localPR, state string)
		want   []string // %s: the head's short sha
	}{
		{
			name: "a CI success written by hand",
			attack: func(t *testing.T, l *localPR, state string) {
				path := filepath.Join(state, "host", "forge", "checks", l.issue.HeadSHA+".yaml")
				require.NoError(t, os.WriteFile(path, []byte("sha: "+l.issue.HeadSHA+"\nattempt: 1\nstate: success\ncommand: \"exit 1\"\n"), 0o644))
			},
			want: []string{"local CI of %s", "it has no log", "a person removes the record to run CI again"},
		},
		{
			name: "an approval added by hand",
			attack: func(t *testing.T, l *localPR, state string) {
				path := filepath.Join(state, "host", "forge", "prs", "1.yaml")
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				forged := strings.Replace(string(data), "state: open", "state: open\napprovals:\n    - by: alice\n      sha: "+l.issue.HeadSHA+"\n      at: 2026-01-01T00:00:00Z", 1)
				require.NoError(t, os.WriteFile(path, []byte(forged), 0o644))
			},
			want: []string{"local PR #1", "its content is not the last version its log holds (approvals added)", "a person puts back the version agenttree last wrote"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocalPR(t, "exit 1")
			l.openPR(t)
			state := filepath.Join(filepath.Dir(l.bare), "state")
			tt.attack(t, l, state)
			for _, hook := range []string{"create_pr", "wait_for_ci", "pr_ci_passed", "pr_mergeable", "pr_approved", "merge_pr", "close_pr"} {
				t.Run(hook, func(t *testing.T) {
					o := runHook(t, l.env, l.issue, hook, nil)
					require.Equal(t, hooks.KindEscalate, o.Kind, "reason: %s", o.Reason)
					assert.Equal(t, hooks.ClassTampered, o.Class)
					assert.False(t, o.AgentFixable())
					for _, want := range append(tt.want, "changed outside agenttree", "no work for the agent", "`agenttree verify`", "`agenttree resume 7 --reason TEXT`") {
						assert.Contains(t, o.Reason, strings.ReplaceAll(want, "%s", gitx.ShortSHA(l.issue.HeadSHA)))
					}
					assert.Empty(t, o.Files, "nothing for the agent")
					assert.Empty(t, o.Send)
				})
			}
		})
	}
}
