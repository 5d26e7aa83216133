package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

// withRun writes settings above a pipeline whose stage a has the gate
// `run: {command: make test, env: ENV}`, in the given form; the settings
// and the gate's env stand at the same lines and columns in both.
func withRun(form stages.Form, settings, env string) string {
	if form == stages.Compatible {
		return settings + "flows:\n  default:\n    stages:\n      a:\n        pre_completion:\n          - run: {command: make test, env: " + env + "}\n      b:\n"
	}
	return settings + "stages:\n  # two lines, as the compatible form's\n  # flows, default and stages\n  - name: a\n    pre_completion:\n          - run: {command: make test, env: " + env + "}\n  - name: b\n"
}

// ci.env and run's env load in both spellings, as lists of names.
func TestEnvNamesLoad(t *testing.T) {
	for _, form := range forms {
		cfg, err := parseYAML(t, withRun(form, "ci:\n  command: make check\n  env: [GOFLAGS, npm_config_cache]\n", "[GOPROXY]"))
		require.NoError(t, err, form)
		assert.Equal(t, []string{"GOFLAGS", "npm_config_cache"}, cfg.CI.Env, form)
		assert.Empty(t, cfg.Warnings, form)
		n, _ := cfg.Node("a")
		_, gates := n.Leaving(nil)
		require.Len(t, gates, 1, form)
		assert.Equal(t, []string{"GOPROXY"}, gates[0].Params["env"], form)
	}
	cfg, err := parseYAML(t, withSettings(stages.Canonical, "ci:\n  command: make check\n  env:\n"))
	require.NoError(t, err)
	assert.Empty(t, cfg.CI.Env, "`env:` with nothing passes nothing")
}

// What is not a list of names is refused where it is written, saying
// what to write, in both spellings.
func TestEnvNamesErrors(t *testing.T) {
	tests := []struct {
		name    string
		ciEnv   string // ci.env, at line 1 column 23
		runEnv  string // run's env, at line 7 column 44
		ci, run string
	}{
		{name: "a name alone, not a list", ciEnv: "GOFLAGS", runEnv: "GOFLAGS",
			ci:  ":1:23: error: ci.env must be a list of environment variable names, got \"GOFLAGS\" (write a list of names, e.g. `env: [GOFLAGS, NPM_CONFIG_CACHE]`",
			run: ":7:44: error: hook `run` parameter `env` must be a list of environment variable names, got \"GOFLAGS\""},
		{name: "names with values", ciEnv: "{GOFLAGS: -v}", runEnv: "{GOFLAGS: -v}",
			ci:  ":1:23: error: ci.env must be a list of environment variable names, got a mapping (write the names only, e.g. `env: [GOFLAGS]`: the values are those of the environment agenttree runs in)",
			run: ":7:44: error: hook `run` parameter `env` must be a list of environment variable names, got a mapping (write the names only"},
		{name: "NAME=value", ciEnv: "[GOFLAGS=-v]", runEnv: "[GOFLAGS=-v]",
			ci: ":1:24: error: ci.env: \"GOFLAGS=-v\" gives a value: not the name of an environment variable; " +
				"list the name (GOFLAGS) and set its value in the environment agenttree runs in",
			run: ":7:45: error: hook `run` parameter `env`: \"GOFLAGS=-v\" gives a value"},
		{name: "not a name", ciEnv: "[GOFLAGS, MY-VAR]", runEnv: "[1ST]",
			ci:  ":1:33: error: ci.env: \"MY-VAR\" is not the name of an environment variable: use letters, digits and _, not starting with a digit",
			run: ":7:45: error: hook `run` parameter `env`: \"1ST\" is not the name of an environment variable"},
		{name: "an item that is not a string", ciEnv: "[[A]]", runEnv: "[{A: b}]",
			ci:  ":1:24: error: ci.env: expected a string, got a list (write each item as a variable's name, e.g. `- GOFLAGS`)",
			run: ":7:45: error: hook `run` parameter `env`: expected a string, got a mapping"},
		{name: "agenttree's own", ciEnv: "[AGENTTREE_TOKEN]", runEnv: "[AGENTTREE_CONFIG]",
			ci:  ":1:24: error: ci.env: AGENTTREE_TOKEN is agenttree's own: the code gets the AGENTTREE_* values agenttree sets for it, never agenttree's settings or a session's token; use another name",
			run: ":7:45: error: hook `run` parameter `env`: AGENTTREE_CONFIG is agenttree's own"},
	}
	for _, tt := range tests {
		for _, form := range forms {
			t.Run(tt.name+"/"+string(form), func(t *testing.T) {
				_, err := parseYAML(t, withRun(form, "ci: {command: x, env: "+tt.ciEnv+"}\n", tt.runEnv))
				require.Error(t, err)
				containEach(t, errorStrings(t, err), []string{"/repo/.agenttree.yaml" + tt.ci, "/repo/.agenttree.yaml" + tt.run})
			})
		}
	}
}

// A name that looks like a credential loads, with a warning at it that
// says every agent can read it and what to do instead.
func TestEnvNamesThatLookLikeCredentialsWarn(t *testing.T) {
	for _, form := range forms {
		cfg, err := parseYAML(t, withRun(form, "ci: {command: x, env: [GOFLAGS, GH_TOKEN]}\n", "[GOPROXY, AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK]"))
		require.NoError(t, err, form)
		assert.Equal(t, []string{"GOFLAGS", "GH_TOKEN"}, cfg.CI.Env)
		const why = ", which looks like a credential, to the agents' code: it will see it, and so can every agent (a commit that prints it is enough) " +
			"(leave it out and give the code a credential of its own, with only the access it needs, in a file or service it may read; keep it only if every agent may have it)"
		assert.Equal(t, []string{
			"/repo/.agenttree.yaml:1:33: warning: ci.env passes GH_TOKEN" + why,
			"/repo/.agenttree.yaml:7:54: warning: hook `run` parameter `env` passes AWS_SECRET_ACCESS_KEY" + why,
			"/repo/.agenttree.yaml:7:77: warning: hook `run` parameter `env` passes SSH_AUTH_SOCK" + why,
		}, diagStrings(cfg.Warnings), form)
	}
}
