package toplevel

import (
	"maps"
	"slices"
	"time"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
)

// Keys lists the keys the readers of the top level read, by the place of
// their mapping: "" for the top level itself, a section's key for the
// section ("ci_polling"), and "NAME.*" for each entry of a mapping of
// names ("roles.*"). lax adds the earlier tool's spellings. The lists
// are taken from the readers themselves, so what is checked against them
// (the generated reference, the JSON Schema) cannot drift from what is
// read.
func Keys(lax bool) map[string][]string {
	d := &diag.Collector{Lax: lax}
	cfg := stages.Defaults()
	var c *compat
	if lax {
		c = &compat{}
	}
	var refs []agentRef
	var bounds [3]bound[time.Duration]
	var thresholds [2]bound[int]
	role := &stages.RoleSessions{}
	roleFields := roleSessionFields(d, role, "", &refs)
	if c != nil {
		c.roleFields(d, roleFields, role, &refs)
	}
	out := map[string]fields{
		"":                  topFields(d, nil, cfg, c, &refs),
		"ci_polling":        ciPollingFields(d, &cfg.CIPolling, &bounds[0], &bounds[1], &bounds[2]),
		"conflict_handling": conflictFields(d, &cfg.Conflicts),
		"ci":                ciFields(d, &cfg.CI),
		"github":            githubFields(d, &cfg.GitHub),
		"controller":        controllerFields(d, &cfg.Controller),
		"circuit_breaker":   breakerFields(d, &cfg.CircuitBreaker, &thresholds[0], &thresholds[1]),
		"tmux":              tmuxFields(d, nil, &cfg.Tmux),
		"notify":            notifyFields(d, nil, &cfg.Notify),
		"agent_create":      agentCreateFields(d, &cfg.AgentCreate),
		"worktrees":         worktreesFields(d, &cfg.Worktrees),
		"agents.*":          agentFields(d, &stages.Agent{}, ""),
		"roles.*":           roleFields,
	}
	if c != nil {
		tool := agentFields(d, &stages.Agent{}, "")
		maps.Copy(tool, toolFields(d, ""))
		out["tools.*"] = tool
	}
	keys := make(map[string][]string, len(out))
	for where, fs := range out {
		keys[where] = slices.Sorted(maps.Keys(fs))
	}
	keys[""] = slices.Sorted(slices.Values(append(keys[""], shaped...)))
	return keys
}
