package codeenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The controller's environment as a person's shell leaves it: what every
// program needs, and credentials.
var controller = []string{
	"PATH=/usr/local/bin:/usr/bin", "HOME=/root", "USER=root", "LOGNAME=root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
	"TERM=xterm", "TMPDIR=/tmp", "TZ=UTC", "SHELL=/bin/bash",
	"GH_TOKEN=gh-secret", "GITHUB_TOKEN=ghs-secret", "GH_ENTERPRISE_TOKEN=ghe-secret", "SSH_AUTH_SOCK=/tmp/ssh/agent.1",
	"AWS_SECRET_ACCESS_KEY=aws-secret", "AWS_ACCESS_KEY_ID=AKIA", "GOOGLE_APPLICATION_CREDENTIALS=/root/gcp.json",
	"AZURE_CLIENT_SECRET=az-secret", "GIT_DIR=/elsewhere/.git", "GIT_SSH_COMMAND=ssh -i /root/.ssh/deploy",
	"AGENTTREE_TOKEN=session-token", "AGENTTREE_CONFIG=/etc/agenttree.yaml", "AGENTTREE_CI_RUNNER=1", "Agenttree_Role=developer",
	"GOFLAGS=-mod=mod", "=C:=C:\\odd", "NOEQUALS",
}

var essentials = []string{
	"PATH=/usr/local/bin:/usr/bin", "HOME=/root", "USER=root", "LOGNAME=root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
	"TERM=xterm", "TMPDIR=/tmp", "TZ=UTC",
}

func TestEnviron(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		environ  []string
		pass     []string
		vars     []string
		windows  bool
		want     []string
		wantNone []string // names that must not be there
	}{
		{name: "only what every program needs", environ: controller, want: essentials,
			wantNone: []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "GIT_DIR", "SHELL"}},
		{name: "and what the config names", environ: controller, pass: []string{"GOFLAGS", "GH_TOKEN"},
			want: append(essentials[:len(essentials):len(essentials)], "GH_TOKEN=gh-secret", "GOFLAGS=-mod=mod")},
		{name: "a named variable that is not set is left out", environ: controller, pass: []string{"NOT_SET"}, want: essentials},
		{name: "agenttree's values are added and win", environ: controller,
			vars: []string{"AGENTTREE_ISSUE=7", "CI=true", "TZ=Europe/Berlin", "GIT_CONFIG_COUNT=1"},
			want: []string{"PATH=/usr/local/bin:/usr/bin", "HOME=/root", "USER=root", "LOGNAME=root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
				"TERM=xterm", "TMPDIR=/tmp", "AGENTTREE_ISSUE=7", "CI=true", "TZ=Europe/Berlin", "GIT_CONFIG_COUNT=1"}},
		{name: "agenttree's own settings never pass, even named", environ: controller,
			pass: []string{"AGENTTREE_TOKEN", "AGENTTREE_CONFIG", "Agenttree_Role"}, want: essentials,
			wantNone: []string{"AGENTTREE_TOKEN", "AGENTTREE_CONFIG", "AGENTTREE_CI_RUNNER", "Agenttree_Role"}},
		{name: "Windows: the variables it cannot start without, names in any case",
			environ: []string{"Path=C:\\Windows", "SystemRoot=C:\\Windows", "COMSPEC=cmd.exe", "TEMP=C:\\t", "GH_TOKEN=x", "GoFlags=-v"},
			pass:    []string{"GOFLAGS"}, windows: true,
			want: []string{"Path=C:\\Windows", "SystemRoot=C:\\Windows", "COMSPEC=cmd.exe", "TEMP=C:\\t", "GoFlags=-v"}},
		{name: "elsewhere names are case-sensitive", environ: []string{"Path=/bin", "GoFlags=-v"}, pass: []string{"GOFLAGS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := environFor(tt.environ, tt.pass, tt.vars, tt.windows)
			assert.ElementsMatch(t, tt.want, got)
			for _, name := range tt.wantNone {
				for _, kv := range got {
					assert.NotRegexp(t, `(?i)^`+name+`=`, kv)
				}
			}
		})
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want string // "" for a good name
	}{
		{"GOFLAGS", ""},
		{"_private2", ""},
		{"npm_config_cache", ""},
		{"GH_TOKEN", ""}, // a person may mean it: LooksSecret warns
		{"", "is not the name of an environment variable"},
		{"2FA", "is not the name of an environment variable"},
		{"MY-VAR", "is not the name of an environment variable"},
		{"MY VAR", "is not the name of an environment variable"},
		{"GOFLAGS=-mod=mod", `"GOFLAGS=-mod=mod" gives a value: not the name of an environment variable; list the name (GOFLAGS)`},
		{"AGENTTREE_TOKEN", "AGENTTREE_TOKEN is agenttree's own"},
		{"agenttree_config", "agenttree_config is agenttree's own"},
	}
	for _, tt := range tests {
		err := CheckName(tt.name)
		if tt.want == "" {
			assert.NoError(t, err, tt.name)
			continue
		}
		assert.ErrorContains(t, err, tt.want, tt.name)
	}
	assert.ErrorIs(t, CheckName("A=1"), ErrNotAName)
}

func TestLooksSecret(t *testing.T) {
	t.Parallel()
	secret := []string{
		"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "NPM_AUTHTOKEN", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY",
		"AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET", "OPENAI_API_KEY",
		"ANTHROPIC_API_KEY", "STRIPE_APIKEY", "DB_PASSWORD", "MYSQL_PWD_PASSWD", "DB_PASS", "GPG_PASSPHRASE", "SSH_PRIVATE_KEY",
		"DEPLOY_KEYS", "GH_PAT", "HTTP_AUTHORIZATION", "GIT_ASKPASS", "SESSION_COOKIE", "KUBECONFIG", "docker_config", "github_token",
	}
	plain := []string{
		"PATH", "HOME", "GOFLAGS", "GOPATH", "CI", "NODE_ENV", "GIT_AUTHOR_NAME", "MONKEY", "KEYBOARD_LAYOUT", "PWD",
		"GH_HOST", "GITHUB_REPOSITORY", "AWS_REGION", "PATTERN", "PASSTHROUGH",
	}
	for _, name := range secret {
		assert.True(t, LooksSecret(name), name)
	}
	for _, name := range plain {
		assert.False(t, LooksSecret(name), name)
	}
}
