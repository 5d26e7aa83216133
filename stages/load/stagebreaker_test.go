package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

// A stage and a substage may carry their own breaker thresholds, in
// either form of the file; the keys they leave out are 0 (the top
// level's).
func TestStageBreakerThresholds(t *testing.T) {
	files := map[stages.Form]string{
		stages.Canonical: "circuit_breaker: {no_progress_threshold: 4}\nstages:\n" +
			"  - name: implement\n    circuit_breaker: {same_error_threshold: 2}\n" +
			"    substages:\n      - name: code\n      - name: fix\n        circuit_breaker:\n          half_open_after: 1\n          no_progress_threshold: 6\n" +
			"  - name: pr_ready\n    host: controller\n    circuit_breaker: {half_open_after: 3, no_progress_threshold: 5, same_error_threshold: 4}\n" +
			"  - name: done\n    terminal: completion\n",
		stages.Compatible: "circuit_breaker: {no_progress_threshold: 4}\nstages:\n" +
			"  implement:\n    circuit_breaker: {same_error_threshold: 2}\n" +
			"    substages:\n      code:\n      fix:\n        circuit_breaker:\n          half_open_after: 1\n          no_progress_threshold: 6\n" +
			"  pr_ready:\n    host: controller\n    circuit_breaker: {half_open_after: 3, no_progress_threshold: 5, same_error_threshold: 4}\n" +
			"  done:\n    is_completion: true\n",
	}
	for form, text := range files {
		t.Run(string(form), func(t *testing.T) {
			cfg, err := parseYAML(t, text)
			require.NoError(t, err)
			assert.Equal(t, 4, cfg.CircuitBreaker.NoProgress, "the top level's stays its own")
			own := func(path string) *stages.CircuitBreaker {
				n, ok := cfg.Node(path)
				require.True(t, ok, path)
				if n.Sub != nil {
					return n.Sub.CircuitBreaker
				}
				return n.Stage.CircuitBreaker
			}
			assert.Equal(t, &stages.CircuitBreaker{SameError: 2}, cfg.Stage("implement").CircuitBreaker)
			assert.Nil(t, own("implement.code"), "a substage without its own has none (its stage's applies)")
			assert.Equal(t, &stages.CircuitBreaker{HalfOpenAfter: 1, NoProgress: 6}, own("implement.fix"))
			assert.Equal(t, &stages.CircuitBreaker{HalfOpenAfter: 3, NoProgress: 5, SameError: 4}, own("pr_ready"))
			assert.Nil(t, own("done"))
		})
	}
}

func TestStageBreakerErrors(t *testing.T) {
	stage := func(breaker string) string {
		return "stages:\n  - name: a\n    circuit_breaker: " + breaker + "\n  - name: b\n    terminal: completion\n"
	}
	tests := []struct {
		name, text string
		want       string
	}{
		{"zero", stage("{no_progress_threshold: 0}"), ":3:46: error: circuit_breaker.no_progress_threshold must be at least 1, got 0"},
		{"half-open after it opens", stage("{half_open_after: 4, no_progress_threshold: 3}"),
			":3:40: error: circuit_breaker.half_open_after (4) is above no_progress_threshold (3) (the breaker half-opens before it opens)"},
		{"an unknown key", stage("{same_eror_threshold: 2}"), "unknown key `same_eror_threshold` in circuit_breaker"},
		{"not a mapping", stage("3"), "`circuit_breaker` must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, tt.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
