//go:build unix

package shell

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/stages"
)

// controllerSecrets are credentials a person's environment holds, and
// agenttree's own settings: none may reach the agents' code.
var controllerSecrets = map[string]string{
	"GH_TOKEN": "gh-secret", "GITHUB_TOKEN": "ghs-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
	"SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "AGENTTREE_TOKEN": "another-session", "AGENTTREE_CONFIG": "/etc/agenttree.yaml",
}

// A `run` gate gets an allowlist of the controller's environment: what
// every program needs, the names its `env` lists and the issue's values,
// never the person's credentials or agenttree's settings; under
// `sandbox: user:NAME` HOME, USER and LOGNAME are NAME's. Not parallel:
// it sets the controller's environment.
func TestRunGetsAnAllowlistedEnvironment(t *testing.T) {
	for name, value := range controllerSecrets {
		t.Setenv(name, value)
	}
	t.Setenv("AGENTTREE_ISSUE", "999") // the controller's, not the issue's
	t.Setenv("RUN_TEST_LISTED", "passed on purpose")
	t.Setenv("RUN_TEST_UNLISTED", "left out")
	tests := []struct {
		name    string
		sandbox bool
		env     []string // run's env
	}{
		{name: "no sandbox"},
		{name: "no sandbox, a name listed", env: []string{"RUN_TEST_LISTED"}},
		{name: "a credential listed on purpose", env: []string{"GH_TOKEN"}},
		{name: "the sandbox user", sandbox: true, env: []string{"RUN_TEST_LISTED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work, sb, user := t.TempDir(), stages.Sandbox{}, currentUser(t)
			if tt.sandbox {
				u := ostest.OtherUser(t)
				work, _ = otherUsersWorkTree(t, u)
				sb = stages.Sandbox{Kind: stages.SandboxUser, Name: u.Name}
				var err error
				user, err = proc.LookupUser(u.Name)
				require.NoError(t, err)
			}
			issue := hookstest.NewIssue(t)
			issue.WorkDir = work
			issue.Outputs = map[string]string{"out": filepath.Join(work, "env")}
			params := hooks.Params{"command": "env > {{out}}"}
			if tt.env != nil {
				params["env"] = tt.env
			}
			o := hookstest.Call(t, registry(), "run", issue, params, withSandbox(sb))
			require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
			got := readEnv(t, filepath.Join(work, "env"))

			for name := range controllerSecrets {
				if !slices.Contains(tt.env, name) {
					assert.NotContains(t, got, name)
				}
			}
			assert.NotContains(t, got, "RUN_TEST_UNLISTED")
			for _, name := range tt.env {
				assert.Equal(t, os.Getenv(name), got[name], "%s is listed in env", name)
			}
			assert.Equal(t, "7", got["AGENTTREE_ISSUE"], "the issue's own value")
			assert.Equal(t, "Add login", got["AGENTTREE_ISSUE_TITLE"])
			assert.Equal(t, os.Getenv("PATH"), got["PATH"])
			assert.Equal(t, user.Home, got["HOME"])
			assert.Equal(t, user.Name, got["USER"])
			assert.Equal(t, user.Name, got["LOGNAME"])
			for name := range got {
				assert.True(t, allowed(name, tt.env), "%s reached the command", name)
			}
		})
	}
}

// currentUser is this process's user, as the command sees it without a
// sandbox: its environment's HOME, USER and LOGNAME pass as they are.
func currentUser(t *testing.T) proc.User {
	t.Helper()
	return proc.User{Name: os.Getenv("USER"), Home: os.Getenv("HOME")}
}

// allowed says whether name may be in the environment of the agents'
// code with listed passed: the allowlist, the issue's values and what sh
// sets itself.
func allowed(name string, listed []string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR", "TZ", "PWD", "OLDPWD", "SHLVL", "_":
		return true
	}
	return strings.HasPrefix(name, "LC_") || slices.Contains(listed, name) ||
		(strings.HasPrefix(name, "AGENTTREE_") && !slices.Contains([]string{"AGENTTREE_TOKEN", "AGENTTREE_CONFIG"}, name))
}

// readEnv reads what `env` wrote to path.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, value, ok := strings.Cut(line, "=")
		require.True(t, ok, "env printed %q", line)
		out[name] = value
	}
	return out
}
