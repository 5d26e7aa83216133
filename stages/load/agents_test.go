package load_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

// agentsRest is a pipeline with a developer's and a reviewer's stage.
const agentsRest = "stages:\n  - name: work\n  - name: review\n    role: reviewer\n  - name: accepted\n    terminal: completion\n"

func TestAgentsAndRoles(t *testing.T) {
	cfg, err := parseYAML(t, `agents:
  claude: {command: "claude --dangerously-skip-permissions", resume_command: "claude --continue"}
  codex:  {command: codex}
roles:
  developer: {agents: [claude, codex], fallback: same_agent, max_restarts: 3, stall_after_s: 600, auto_start: true}
  reviewer:  {agents: codex}
worktrees: {dir: "../{{project}}-trees"}
project: shop
`+agentsRest)
	require.NoError(t, err)
	assert.Empty(t, cfg.Warnings)
	assert.Equal(t, []string{"claude", "codex"}, cfg.AgentNames())
	claude, ok := cfg.Agent("claude")
	require.True(t, ok)
	assert.Equal(t, "claude --dangerously-skip-permissions", claude.Command)
	assert.Equal(t, "claude --continue", claude.ResumeCommand)
	assert.Equal(t, stages.Pos{File: "/repo/.agenttree.yaml", Line: 2, Col: 3}, claude.Pos)

	dev, ok := cfg.Sessions(stages.RoleDeveloper)
	require.True(t, ok)
	assert.Equal(t, []string{"claude", "codex"}, dev.Agents)
	assert.Equal(t, stages.FallbackSameAgent, dev.Fallback)
	assert.Equal(t, 3, dev.MaxRestarts)
	assert.Equal(t, 600*time.Second, dev.StallAfter)
	assert.True(t, dev.AutoStart)

	rev, ok := cfg.Sessions("reviewer")
	require.True(t, ok)
	assert.Equal(t, []string{"codex"}, rev.Agents, "one name is a list of one")
	assert.Equal(t, stages.FallbackNextInList, rev.Fallback, "defaults")
	assert.Equal(t, 2, rev.MaxRestarts)
	assert.Equal(t, 900*time.Second, rev.StallAfter)
	assert.False(t, rev.AutoStart)

	assert.Equal(t, "/shop-trees", cfg.WorktreesDir())
}

func TestAgentsDefaults(t *testing.T) {
	cfg, err := parseYAML(t, agentsRest)
	require.NoError(t, err)
	assert.Empty(t, cfg.Agents)
	_, ok := cfg.Sessions(stages.RoleDeveloper)
	assert.False(t, ok, "a stage whose role has no entry has no sessions")
	assert.Equal(t, "../{{project}}-worktrees", cfg.Worktrees.Dir)
	assert.Equal(t, "/repo-worktrees", cfg.WorktreesDir(), "the project defaults to the config's directory name")
}

func TestAgentsErrors(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown agent", "agents:\n  claude: {command: claude}\nroles:\n  developer: {agents: [claud]}\n",
			[]string{":4:24: error: role \"developer\" names unknown agent \"claud\"", "did you mean `claude`?"}},
		{"unknown agent, nothing close", "roles:\n  developer: {agents: [gemini]}\n",
			[]string{":2:24: error: role \"developer\" names unknown agent \"gemini\"", "declare it under `agents:`"}},
		{"agent without command", "agents:\n  claude: {resume_command: x}\n",
			[]string{":2:3: error: agent \"claude\" has no command"}},
		{"empty command", "agents:\n  claude: {command: \"  \"}\n",
			[]string{":2:21: error: agents.claude.command is empty"}},
		{"placeholder in command", "agents:\n  claude: {command: \"claude {{issue_id}}\"}\n",
			[]string{":2:21: error: agents.claude.command \"claude {{issue_id}}\" holds {{placeholders}}", "$AGENTTREE_ISSUE"}},
		{"unknown agent key", "agents:\n  claude: {comand: claude}\n",
			[]string{":2:12: error: unknown key `comand` in agents.claude", "did you mean `command`?"}},
		{"bad fallback", "agents:\n  c: {command: c}\nroles:\n  developer: {agents: [c], fallback: next}\n",
			[]string{":4:38: error: unknown roles.developer.fallback \"next\"", "`next_in_list`, `same_agent` or `fail`"}},
		{"negative restarts", "roles:\n  developer: {max_restarts: -1}\n",
			[]string{":2:29: error: roles.developer.max_restarts must be at least 0"}},
		{"unknown role key", "roles:\n  developer: {agent: [c]}\n",
			[]string{":2:15: error: unknown key `agent` in roles.developer", "did you mean `agents`?"}},
		{"a person's role", "roles:\n  human: {}\n",
			[]string{":2:3: error: role \"human\" is not an agent's"}},
		{"worktrees placeholder", "worktrees: {dir: \"../{{issue_id}}\"}\n",
			[]string{":1:18: error: worktrees.dir \"../{{issue_id}}\" uses {{issue_id}}"}},
		{"worktrees home", "worktrees: {dir: \"~/trees\"}\n",
			[]string{":1:18: error: worktrees.dir \"~/trees\" starts with `~`"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, tt.yaml+agentsRest)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestRoleNoStageHasIsAWarning(t *testing.T) {
	cfg, err := parseYAML(t, "agents:\n  c: {command: c}\nroles:\n  reviwer: {agents: [c]}\n"+agentsRest)
	require.NoError(t, err)
	require.Len(t, cfg.Warnings, 1)
	assert.Contains(t, cfg.Warnings[0].String(), `:4:3: warning: no stage has role "reviwer"`)
	assert.Contains(t, cfg.Warnings[0].String(), "did you mean `reviewer`?")
}

func TestAgentsInTheEarlierToolsSpelling(t *testing.T) {
	// The earlier tool's map form: tools, default_tool, a role's tool and
	// worktrees_dir say what agents, roles and worktrees say.
	cfg, err := parseYAML(t, `default_tool: claude
worktrees_dir: .worktrees
tools:
  claude: {command: claude, skip_permissions: true, startup_prompt: "Read TASK.md"}
  aider: {command: aider --yes}
roles:
  manager: {description: a person, process: agenttree run}
  reviewer: {tool: aider, model: sonnet, container: {image: agent:latest}}
  tester: {description: runs the tests}
flows:
  default:
    stages:
      work: {}
      review: {role: reviewer}
      accepted: {is_completion: true}
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"claude", "aider"}, cfg.AgentNames())
	dev, ok := cfg.Sessions(stages.RoleDeveloper)
	require.True(t, ok, "default_tool gives the developer its agent")
	assert.Equal(t, []string{"claude"}, dev.Agents)
	rev, _ := cfg.Sessions("reviewer")
	assert.Equal(t, []string{"aider"}, rev.Agents)
	tester, _ := cfg.Sessions("tester")
	assert.Equal(t, []string{"claude"}, tester.Agents, "a role without a tool has the default one")
	_, ok = cfg.Sessions("manager")
	assert.False(t, ok, "a person's role has no sessions")
	assert.Equal(t, "/repo/.worktrees", cfg.WorktreesDir())

	var got []string
	for _, w := range cfg.Warnings {
		got = append(got, w.Msg)
	}
	assert.Equal(t, []string{
		"tools.claude.skip_permissions is not read",
		"4 keys the earlier tool read change nothing here: tools' `startup_prompt`, the `manager` role, roles' `model`, roles' `description`",
		"roles.reviewer.container is not read",
		`no stage has role "tester"; its entry in ` + "`roles:`" + ` is unused`,
	}, got)
}
