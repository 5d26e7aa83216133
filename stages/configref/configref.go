// Package configref is the reference of .agenttree.yaml, generated from
// what the loader reads so that the two cannot drift: a JSON Schema
// (draft 2020-12) for editors, and docs/CONFIG.md. Both come from the
// hook catalog (every hook, its parameters, outputs and example) and
// from the declaration of every key in package stages/settings, which
// the loader reads the top level by.
package configref

//go:generate go run ../../cmd/configref-gen -out ../../docs

import (
	"slices"

	"github.com/agenttree/agenttree/stages"
)

// SchemaURL is where the generated schema is published; the starter
// config points editors at it.
const SchemaURL = "https://raw.githubusercontent.com/agenttree/agenttree/main/docs/agenttree.schema.json"

// File names of the generated reference, in the docs directory.
const (
	SchemaFile   = "agenttree.schema.json"
	MarkdownFile = "CONFIG.md"
)

// Catalog is the hooks a config may name, with the other names some of
// them are known by (the earlier tool's). hooks.Registry is one.
type Catalog interface {
	stages.HookCatalog
	// Aliases maps each other name of a hook to the hook's name.
	Aliases() map[string]string
}

// hookSpecs lists the catalog's hooks in name order.
func hookSpecs(cat Catalog) []stages.HookSpec {
	names := cat.HookNames()
	out := make([]stages.HookSpec, 0, len(names))
	for _, n := range names {
		if spec, ok := cat.Hook(n); ok {
			out = append(out, spec)
		}
	}
	return out
}

// aliasesOf lists the other names of the hook name, sorted.
func aliasesOf(cat Catalog, name string) []string {
	var out []string
	for alias, canon := range cat.Aliases() {
		if canon == name {
			out = append(out, alias)
		}
	}
	slices.Sort(out)
	return out
}
