package diag

import (
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/internal/codeenv"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// EnvNamesVar reads a list of names of the controller's environment
// variables passed to the repository's code (ci.env, run's env), named
// what in messages. Each item that is not a name (codeenv.CheckName) is
// an error at the item; each that looks like a credential
// (codeenv.LooksSecret) a warning there, since every agent can read what
// that code gets. Nothing (`env:`) is no names.
func (d *Collector) EnvNamesVar(n *yaml.Node, what string, dst *[]string) bool {
	if yamlnode.IsNull(n) {
		*dst = nil
		return true
	}
	if n.Kind != yaml.SequenceNode {
		hint := "write a list of names, e.g. `env: [GOFLAGS, NPM_CONFIG_CACHE]`; each passes the variable of that name from the environment agenttree runs in"
		if n.Kind == yaml.MappingNode {
			hint = "write the names only, e.g. `env: [GOFLAGS]`: the values are those of the environment agenttree runs in"
		}
		d.Errorf(d.Pos(n), hint, "%s must be a list of environment variable names, got %s", what, yamlnode.Describe(n))
		return false
	}
	before := d.errors
	names := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		name, err := yamlnode.String(item)
		if err != nil {
			d.Errorf(d.Pos(item), "write each item as a variable's name, e.g. `- GOFLAGS`", "%s: %v", what, err)
			continue
		}
		if err := codeenv.CheckName(name); err != nil {
			d.Errorf(d.Pos(item), "", "%s: %v", what, err)
			continue
		}
		if codeenv.LooksSecret(name) {
			d.Warnf(d.Pos(item), "leave it out and give the code a credential of its own, with only the access it needs, in a file or service it may read; "+
				"keep it only if every agent may have it",
				"%s passes %s, which looks like a credential, to the agents' code: it will see it, and so can every agent (a commit that prints it is enough)", what, name)
		}
		names = append(names, name)
	}
	if d.errors != before {
		return false
	}
	*dst = names
	return true
}
