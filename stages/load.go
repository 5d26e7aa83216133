package stages

import (
	"fmt"
	"os"
	"path/filepath"
)

// Find walks up from dir to the nearest .agenttree.yaml.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, FileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s in %s or any parent directory; run `agenttree init` to create one, or pass --config PATH", FileName, abs)
		}
	}
}

// Load reads the config at path and validates it against the hook catalog.
// On any error it returns a *LoadError listing every problem found.
func Load(path string, catalog HookCatalog) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, catalog)
}

// Parse validates config text as if read from file.
func Parse(file string, data []byte, catalog HookCatalog) (*Config, error) {
	d := &diags{file: file}
	cfg := load(d, data, catalog)
	errs, warns := d.split()
	if len(errs) > 0 {
		return nil, &LoadError{Diagnostics: append(errs, warns...)}
	}
	cfg.Warnings = warns
	return cfg, nil
}

// load runs the passes in turn: parse the YAML with positions; shape it
// alike whichever form it is written in (the compatible form's own pass
// turns the earlier tool's map form into canonical entries); read the
// settings and stages; resolve the flows; validate what refers to what.
// Every pass reports into d; a config with any error is dropped by Parse,
// so a pass may leave its part unset once it has reported why.
func load(d *diags, data []byte, catalog HookCatalog) *Config {
	root := parse(d, data)
	if root == nil {
		return nil
	}
	src := shape(d, root)
	cfg := readTopLevel(d, src.settings)
	cfg.File, cfg.Form = d.file, src.form
	led := newLedger()
	r := &stageReader{d: d, hooks: &hookReader{d: d, cat: catalog, led: led}, led: led}
	cfg.Stages, cfg.byName = r.stages(src.stages)
	flows, broken := resolveFlows(d, cfg, src.flows)
	cfg.Flows = flows
	if len(cfg.Stages) == 0 {
		d.errorf(d.pos(root), "add a `stages:` list", "the config declares no stages")
		return cfg
	}
	withDefault(d, cfg, src)
	validate(d, cfg, led, broken)
	return cfg
}
