//go:build unix

package local_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/proc"
)

// controllerSecrets are credentials a person's environment holds, and
// agenttree's own settings: none may reach the agents' code.
var controllerSecrets = map[string]string{
	"GH_TOKEN": "gh-secret", "GITHUB_TOKEN": "ghs-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
	"SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "AGENTTREE_TOKEN": "another-session", "AGENTTREE_CONFIG": "/etc/agenttree.yaml",
}

// The CI command gets an allowlist of the controller's environment (the
// runner's is the controller's): what every program needs, the names
// ci.env lists and CI's own values, never the person's credentials,
// which would reach every agent through the CI log and ci_feedback.md;
// under `sandbox: user:NAME` HOME, USER and LOGNAME are NAME's. Not
// parallel: it sets the controller's environment.
func TestCIGetsAnAllowlistedEnvironment(t *testing.T) {
	for name, value := range controllerSecrets {
		t.Setenv(name, value)
	}
	t.Setenv("CI", "the controller's")
	t.Setenv("CI_TEST_LISTED", "passed on purpose")
	t.Setenv("CI_TEST_UNLISTED", "left out")
	tests := []struct {
		name    string
		sandbox bool
		env     []string // ci.env
	}{
		{name: "no sandbox"},
		{name: "no sandbox, a name listed", env: []string{"CI_TEST_LISTED"}},
		{name: "a credential listed on purpose", env: []string{"GITHUB_TOKEN"}},
		{name: "the sandbox user", sandbox: true, env: []string{"CI_TEST_LISTED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := local.Options{CICommand: "echo '--- env'; env; echo '--- end'", CIEnv: tt.env}
			user := proc.User{Name: os.Getenv("USER"), Home: os.Getenv("HOME")}
			if tt.sandbox {
				u := ostest.OtherUser(t)
				opts.CIUser = u.Name
				var err error
				user, err = proc.LookupUser(u.Name)
				require.NoError(t, err)
			}
			e, f := newForge(t, opts)
			ostest.OpenUp(t, e.bare)
			sha := e.feature(t)
			c := waitCI(t, f, sha)
			log, err := f.Log(context.Background(), c, 0)
			require.NoError(t, err)
			require.Equal(t, forge.CheckSuccess, c.State, log)
			got := envInLog(t, log)

			for name, value := range controllerSecrets {
				if !slices.Contains(tt.env, name) {
					assert.NotContains(t, got, name)
					assert.NotContains(t, log, value)
				}
			}
			assert.NotContains(t, got, "CI_TEST_UNLISTED")
			for _, name := range tt.env {
				assert.Equal(t, os.Getenv(name), got[name], "%s is listed in ci.env", name)
			}
			assert.Equal(t, "true", got["CI"], "CI's own value, not the controller's")
			assert.Equal(t, "1", got["AGENTTREE_CI"])
			assert.Equal(t, sha, got["AGENTTREE_CI_SHA"])
			assert.Equal(t, os.Getenv("PATH"), got["PATH"])
			assert.Equal(t, user.Home, got["HOME"])
			assert.Equal(t, user.Name, got["USER"])
			assert.Equal(t, user.Name, got["LOGNAME"])
			for name := range got {
				assert.True(t, ciAllowed(name, tt.env, tt.sandbox), "%s reached the CI command", name)
			}
		})
	}
}

// ciAllowed says whether name may be in the CI command's environment with
// listed passed: the allowlist, CI's values, git's safe.directory for the
// sandbox user's checkout, and what sh sets itself.
func ciAllowed(name string, listed []string, sandbox bool) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR", "TZ", "PWD", "OLDPWD", "SHLVL", "_",
		"CI", "AGENTTREE_CI", "AGENTTREE_CI_SHA":
		return true
	case "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0":
		return sandbox
	}
	return strings.HasPrefix(name, "LC_") || slices.Contains(listed, name)
}

// envInLog reads what `env` printed between the command's markers in a
// CI log.
func envInLog(t *testing.T, log string) map[string]string {
	t.Helper()
	_, rest, ok := strings.Cut(log, "--- env\n")
	require.True(t, ok, log)
	printed, _, ok := strings.Cut(rest, "--- end\n")
	require.True(t, ok, log)
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(printed), "\n") {
		name, value, ok := strings.Cut(line, "=")
		require.True(t, ok, "env printed %q", line)
		out[name] = value
	}
	return out
}
