package load

import (
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/check"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
)

// validate checks the pipeline as a whole once every stage and flow is
// read (package check).
func validate(d *diag.Collector, cfg *stages.Config, cat stages.HookCatalog, led *ledger.Ledger, broken map[string]bool) {
	check.Pipeline(d, cfg, cat, led, broken)
}
