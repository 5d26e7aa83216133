package load

import (
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// parse reads the file as YAML, keeping positions, and returns its
// top-level mapping, or nil when there is none to read. A syntax error is
// returned, not reported: the caller reads past it (readPastSyntax).
func parse(d *diag.Collector, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || yamlnode.IsNull(doc.Content[0]) {
		d.Errorf(stages.Pos{File: d.File, Line: 1, Col: 1}, "write its stages, or run `agenttree init --force` to replace it with the starter", "the config is empty")
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		d.Errorf(d.Pos(root), "", "the config must be a mapping of keys such as `stages:` and `flows:`, got %s", yamlnode.Describe(root))
		return nil, nil
	}
	for _, dup := range yamlnode.Duplicates(root) {
		d.Errorf(d.Pos(dup.Key), "keep one of them, merging what each says", "duplicate key `%s` (the first is at %s)", dup.Key.Value, d.Pos(dup.First))
	}
	return root, nil
}
