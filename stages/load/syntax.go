package load

import (
	"slices"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlsyntax"
)

// maxSyntaxErrors bounds the syntax mistakes one load reads past: past a
// few, the file is more likely mangled than mistyped.
const maxSyntaxErrors = 10

// readPastSyntax reports data's syntax errors at the tokens that are
// wrong, then what else the file gets wrong: what loading it with the
// mistakes neutralised and loading it with them repaired both report
// (yamlsyntax says why that is what does not depend on the broken lines).
func readPastSyntax(d *diag.Collector, data []byte, catalog stages.HookCatalog) {
	rec := yamlsyntax.Recover(data, maxSyntaxErrors)
	for _, e := range rec.Errors {
		d.Errorf(stages.Pos{File: d.File, Line: e.Line, Col: e.Col}, e.Hint, "%s", e.Msg)
	}
	if !rec.Complete {
		return
	}
	neutral, ok := diagnosticsOf(d.File, rec.Neutralised, catalog)
	if !ok {
		return
	}
	repaired, ok := diagnosticsOf(d.File, rec.Repaired, catalog)
	if !ok {
		return
	}
	for _, x := range neutral {
		if slices.Contains(repaired, x) {
			d.Add(x)
		}
	}
}

// diagnosticsOf loads one reading of a file; ok is false when yaml.v3
// still cannot parse it.
func diagnosticsOf(file string, data []byte, catalog stages.HookCatalog) (_ []stages.Diagnostic, ok bool) {
	c := &diag.Collector{File: file}
	root, err := parse(c, data)
	if err != nil {
		return nil, false
	}
	if root != nil {
		loadRoot(c, root, catalog)
	}
	errs, warns := c.Split()
	return append(errs, warns...), true
}
