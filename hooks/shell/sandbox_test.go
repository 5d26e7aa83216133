//go:build unix

package shell

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/settings"
)

// withSandbox is an engine's env whose config has sandbox sb.
func withSandbox(sb stages.Sandbox) *hooks.Env {
	cfg := settings.Defaults()
	cfg.Sandbox = sb
	return &hooks.Env{Config: cfg}
}

// otherUsersWorkTree is a work tree owned by u, as an agent's is, that u
// can reach, beside a directory of root's (0755) that u may not write.
func otherUsersWorkTree(t *testing.T, u ostest.User) (work, rootOwned string) {
	t.Helper()
	base := t.TempDir()
	work, rootOwned = filepath.Join(base, "work"), filepath.Join(base, "host")
	require.NoError(t, os.Mkdir(work, 0o755))
	require.NoError(t, os.Mkdir(rootOwned, 0o755))
	require.NoError(t, os.Chown(work, u.UID, u.GID))
	ostest.OpenUp(t, work)
	return work, rootOwned
}

// Under `sandbox: user:NAME` a `run` command runs as NAME, with NAME's
// HOME: it may write in the agent's work tree and not in the host's
// directories. Without a sandbox it runs as the host's user, as before.
func TestRunAsTheSandboxUser(t *testing.T) {
	u := ostest.OtherUser(t)
	const command = `id -u > {{out}}; echo "$HOME"; touch {{target}}`
	tests := []struct {
		name     string
		sandbox  stages.Sandbox
		target   string // "work" or "host"
		kind     hooks.Kind
		wantUID  int
		wantFile bool
	}{
		{name: "the agents' user writes its work tree", sandbox: stages.Sandbox{Kind: stages.SandboxUser, Name: u.Name},
			target: "work", kind: hooks.KindPass, wantUID: u.UID, wantFile: true},
		{name: "the agents' user cannot write the host's files", sandbox: stages.Sandbox{Kind: stages.SandboxUser, Name: u.Name},
			target: "host", kind: hooks.KindFail, wantUID: u.UID},
		{name: "no sandbox: the host's user", target: "host", kind: hooks.KindPass, wantUID: os.Geteuid(), wantFile: true},
		{name: "sandbox none: the host's user", sandbox: stages.Sandbox{Kind: stages.SandboxNone}, target: "host",
			kind: hooks.KindPass, wantUID: os.Geteuid(), wantFile: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			work, host := otherUsersWorkTree(t, u)
			out := filepath.Join(work, "uid")
			target := filepath.Join(map[string]string{"work": work, "host": host}[tt.target], "written")
			issue := hookstest.NewIssue(t)
			issue.WorkDir = work
			issue.Outputs = map[string]string{"out": out, "target": target}

			o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": command}, withSandbox(tt.sandbox))
			require.Equal(t, tt.kind, o.Kind, o.Reason)
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Equal(t, strconv.Itoa(tt.wantUID)+"\n", string(data))
			if tt.wantFile {
				assert.FileExists(t, target)
			} else {
				assert.NoFileExists(t, target)
				assert.Contains(t, o.Reason, "Permission denied")
			}
			home := os.Getenv("HOME")
			if tt.sandbox.Kind == stages.SandboxUser {
				agent, err := proc.LookupUser(u.Name)
				require.NoError(t, err)
				home = agent.Home
			}
			assert.Equal(t, home, lines.First(o.Outputs["output_tail"]), "HOME is the user's")
		})
	}
}

// A sandbox agenttree cannot run repository code in is refused, and the
// command does not run on the host instead; so is a user that does not
// exist.
func TestRunRefusesWhatItCannotSandbox(t *testing.T) {
	tests := []struct {
		sandbox stages.Sandbox
		want    []string
	}{
		{stages.Sandbox{Kind: stages.SandboxDocker, Name: "golang:1.26"},
			[]string{"sandbox: docker:golang:1.26: agenttree cannot run repository code (run gates, local CI) in a container yet", "does not run it on the host"}},
		{stages.Sandbox{Kind: stages.SandboxPodman, Name: "img"}, []string{"sandbox: podman:img: agenttree cannot run repository code"}},
		{stages.Sandbox{Kind: stages.SandboxUser, Name: "agenttree-no-such-user"},
			[]string{"sandbox: user:agenttree-no-such-user: user agenttree-no-such-user: ", "create the user or change the config's sandbox"}},
	}
	for _, tt := range tests {
		t.Run(tt.sandbox.String(), func(t *testing.T) {
			t.Parallel()
			issue := hookstest.NewIssue(t)
			issue.WorkDir = issue.Dir
			o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": "touch ran"}, withSandbox(tt.sandbox))
			require.Equal(t, hooks.KindFail, o.Kind)
			assert.Equal(t, hooks.ClassConfig, o.Class)
			for _, s := range tt.want {
				assert.Contains(t, o.Reason, s)
			}
			assert.NoFileExists(t, filepath.Join(issue.Dir, "ran"), "nothing ran on the host")
		})
	}
}

// notRootHelperEnv makes the test binary, re-run as the other user, run
// TestHelperRunNotRoot: a `run` command under `sandbox: user:root`.
const notRootHelperEnv = "SHELL_TEST_NOT_ROOT"

func TestHelperRunNotRoot(t *testing.T) {
	dir := os.Getenv(notRootHelperEnv)
	if dir == "" {
		t.Skip("the child TestRunAsAnotherUserNeedsRoot starts")
	}
	issue := &hooks.Issue{ID: 7, Stage: "implement.code", Dir: dir, WorkDir: dir}
	o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": "touch ran"},
		withSandbox(stages.Sandbox{Kind: stages.SandboxUser, Name: "root"}))
	os.Stdout.WriteString(string(o.Kind) + ": " + o.Reason + "\n")
}

// A process that may not switch users (not root) refuses to run the
// command, rather than run it as itself.
func TestRunAsAnotherUserNeedsRoot(t *testing.T) {
	u := ostest.OtherUser(t)
	exe := ostest.Executable(t)
	work, _ := otherUsersWorkTree(t, u)
	cmd := u.Command(exe, "-test.run=^TestHelperRunNotRoot$")
	cmd.Env = append(os.Environ(), notRootHelperEnv+"="+work)
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "fail: run \"touch ran\": the controller must run as root to run repository code as root (sandbox: user:root)")
	assert.Contains(t, string(out), "only root may run commands as another user, and this process runs as uid "+strconv.Itoa(u.UID))
	assert.NoFileExists(t, filepath.Join(work, "ran"))
}
