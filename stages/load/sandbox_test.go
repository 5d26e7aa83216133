package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestSandbox(t *testing.T) {
	const rest = "stages:\n  - name: work\n  - name: accepted\n    terminal: completion\n"
	for _, tt := range []struct {
		value string
		want  stages.Sandbox
		err   string
	}{
		{value: "none", want: stages.Sandbox{Kind: stages.SandboxNone}},
		{value: "user:agent1", want: stages.Sandbox{Kind: stages.SandboxUser, Name: "agent1"}},
		{value: "docker:ghcr.io/acme/agent:1", want: stages.Sandbox{Kind: stages.SandboxDocker, Name: "ghcr.io/acme/agent:1"}},
		{value: "podman:agent", want: stages.Sandbox{Kind: stages.SandboxPodman, Name: "agent"}},
		{value: `"user:"`, err: `:1:10: error: bad sandbox "user:"`},
		{value: "vm:x", err: `:1:10: error: bad sandbox "vm:x"`},
	} {
		t.Run(tt.value, func(t *testing.T) {
			cfg, err := parseYAML(t, "sandbox: "+tt.value+"\n"+rest)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Contains(t, err.Error(), "user:NAME")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Sandbox)
		})
	}
}

func TestAgentCreate(t *testing.T) {
	const rest = "stages:\n  - name: work\n  - name: accepted\n    terminal: completion\nflows:\n  default: [work, accepted]\n  quick: [work, accepted]\n"
	cfg, err := parseYAML(t, "agent_create:\n  flows: [default, quick]\n  vars: [touches_ui]\n"+rest)
	require.NoError(t, err)
	assert.Equal(t, []string{"default", "quick"}, cfg.AgentCreate.Flows)
	assert.Equal(t, []string{"touches_ui"}, cfg.AgentCreate.Vars)

	_, err = parseYAML(t, "agent_create:\n  flows: [quik]\n"+rest)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `:2:3: error: agent_create names unknown flow "quik"`)
	assert.Contains(t, err.Error(), "did you mean `quick`?")
}
