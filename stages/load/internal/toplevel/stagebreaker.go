package toplevel

import (
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
)

// StageBreaker reads a stage's circuit_breaker: its own thresholds over
// the top level's, 0 where it keeps the top level's. Its two thresholds
// stand in order when it sets both; one it sets alone is put in order
// with the inherited one where the issue is (policy.Thresholds).
func StageBreaker(d *diag.Collector, n *yaml.Node) *stages.CircuitBreaker {
	if !d.IsMap(n, "circuit_breaker") {
		return nil
	}
	b := &stages.CircuitBreaker{}
	half := bound[int]{key: "half_open_after", val: &b.HalfOpenAfter}
	open := bound[int]{key: "no_progress_threshold", val: &b.NoProgress}
	breakerFields(d, b, &half, &open).mapping(d, n, "circuit_breaker")
	if half.at != nil && open.at != nil {
		ascending(d, "circuit_breaker", "the breaker half-opens before it opens", &half, &open)
	}
	return b
}
