package load_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// bigConfig writes a pipeline of n stages in the given form. Every stage has
// two substages, hooks whose parameters name stages (on_fail, rollback), an
// on_failure with a message template, and a second flow lists every other
// stage: the shapes that made loading quadratic.
func bigConfig(form stages.Form, n int) []byte {
	var b strings.Builder
	b.WriteString("project: bench\n")
	if form == stages.Compatible {
		b.WriteString("flows:\n  default:\n    stages:\n")
		for i := range n {
			fmt.Fprintf(&b, `      s%[1]d:
        on_failure: {step_back_to: s%[1]d.code, message: "{{failure_reason}}"}
        substages:
          code:
          review:
            pre_completion:
              - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: code}
            post_completion:
              - rollback: {to: s%[1]d.code, max_rollbacks: 3}
`, i)
		}
		b.WriteString("      done:\n        is_completion: true\n  quick:\n    stages: [")
	} else {
		b.WriteString("stages:\n")
		for i := range n {
			fmt.Fprintf(&b, `  - name: s%[1]d
    on_failure: {step_back_to: s%[1]d.code, message: "{{failure_reason}}"}
    substages:
      - name: code
      - name: review
        pre_completion:
          - section_check: {file: review.md, section: Blocking, expect: empty, on_fail: code}
        post_completion:
          - rollback: {to: s%[1]d.code, max_rollbacks: 3}
`, i)
		}
		b.WriteString("  - name: done\n    terminal: completion\nflows:\n  quick: [")
	}
	for i := 0; i < n; i += 2 {
		fmt.Fprintf(&b, "s%d, ", i)
	}
	b.WriteString("done]\n")
	return []byte(b.String())
}

func TestBigConfigLoadsCleanly(t *testing.T) {
	for _, form := range []stages.Form{stages.Canonical, stages.Compatible} {
		t.Run(string(form), func(t *testing.T) {
			cfg, err := load.Parse("/repo/.agenttree.yaml", bigConfig(form, 10), catalog())
			require.NoError(t, err)
			assert.Equal(t, form, cfg.Form)
			assert.Empty(t, cfg.Warnings)
			quick, err := cfg.Flow("quick")
			require.NoError(t, err)
			assert.Len(t, quick.Nodes, 5*2+1)
			n, ok := cfg.Node("s3.review")
			require.True(t, ok)
			_, gates := n.Leaving(n)
			require.Len(t, gates, 1)
			assert.Equal(t, "s3.code", gates[0].Params["on_fail"])
		})
	}
}

// BenchmarkLoadCompatible and BenchmarkLoadCanonical load (what
// `agenttree validate` does: parse, check, build the pipeline) pipelines
// of 200, 2,000 and 20,000 stages, each ten times the one before: loading
// is linear when ns/stage stays flat, and the time grows tenfold.
func BenchmarkLoadCompatible(b *testing.B) { benchmarkLoad(b, stages.Compatible) }

func BenchmarkLoadCanonical(b *testing.B) { benchmarkLoad(b, stages.Canonical) }

func benchmarkLoad(b *testing.B, form stages.Form) {
	cat := catalog()
	for _, n := range []int{200, 2000, 20000} {
		b.Run(fmt.Sprintf("stages=%d", n), func(b *testing.B) {
			data := bigConfig(form, n)
			cpu0, ok := cpuTime()
			for b.Loop() {
				if _, err := load.Parse("/repo/.agenttree.yaml", data, cat); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/stage")
			// The process's CPU time says what the wall clock cannot on a
			// busy machine: what loading cost, not what it waited.
			if cpu1, _ := cpuTime(); ok {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
