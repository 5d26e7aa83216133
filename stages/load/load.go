// Package load reads .agenttree.yaml into a stages.Config, in passes:
// parse the YAML with positions (past a syntax error too: syntax.go);
// shape it alike whichever form it is written in (the earlier tool's map
// form has a pass of its own); read the
// top-level settings (internal/toplevel) and the stages, their hook
// entries read by internal/hookentry; resolve the flows; validate what
// refers to what (internal/ledger keeps it until then) and where the
// controller's failures lead. Every problem is reported with its place in
// the file, and a config with any error is rejected whole.
package load

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/hookentry"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
	"github.com/agenttree/agenttree/stages/load/internal/toplevel"
)

// File reads the config at path and validates it against the hook
// catalog. On any error in the config it returns a *stages.LoadError
// listing every problem found.
func File(path string, catalog stages.HookCatalog) (*stages.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, catalog)
}

// Parse validates config text as if read from file.
func Parse(file string, data []byte, catalog stages.HookCatalog) (*stages.Config, error) {
	d := &diag.Collector{File: file}
	cfg := load(d, data, catalog)
	errs, warns := d.Split()
	if len(errs) > 0 {
		return nil, &stages.LoadError{Diagnostics: append(errs, warns...)}
	}
	cfg.Warnings = warns
	return cfg, nil
}

// load runs the passes in turn. Every pass reports into d; a config with
// any error is dropped by Parse, so a pass may leave its part unset once
// it has reported why.
func load(d *diag.Collector, data []byte, catalog stages.HookCatalog) *stages.Config {
	root, err := parse(d, data)
	if err != nil {
		readPastSyntax(d, data, catalog)
		return nil
	}
	if root == nil {
		return nil
	}
	return loadRoot(d, root, catalog)
}

// loadRoot runs the passes after parsing on the file's top-level mapping.
func loadRoot(d *diag.Collector, root *yaml.Node, catalog stages.HookCatalog) *stages.Config {
	src := shape(d, root)
	led := ledger.New(catalog)
	cfg := toplevel.Read(d, led, src.settings)
	cfg.File, cfg.Form = d.File, src.form
	r := &stageReader{d: d, hooks: hookentry.NewReader(d, catalog, led), led: led}
	r.hooks.CIFailure = cfg.CIPolling.OnFailure
	r.addStages(cfg, src.stages)
	flows, broken := resolveFlows(d, cfg, src.flows)
	cfg.Flows = flows
	if len(cfg.Stages) == 0 {
		d.Errorf(d.Pos(root), "add a `stages:` list", "the config declares no stages")
		return cfg
	}
	withDefault(d, cfg, src)
	validate(d, cfg, catalog, led, broken)
	return cfg
}
