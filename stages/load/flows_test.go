package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages/load"
)

// A pipeline that declares no terminal stage loads, and `validate` warns
// of each flow that has work in it, with the stage issues stay at and the
// stage to add. A pipeline that declares one has its flows checked as it
// loads.
func TestUnending(t *testing.T) {
	const hint = " (add the stage issues end in, last in `stages:` (and in each flow of `flows:`): `- name: accepted` with `terminal: completion`)"
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "no end at all",
			yaml: "stages:\n  - name: backlog\n    parking_lot: true\n  - name: implement\n  - name: review\n",
			want: []string{`/repo/.agenttree.yaml:1:1: warning: flow "default" has no terminal stage, nor has any stage of the pipeline: ` +
				"an issue on it is never done, and stays at review for good" + hint}},
		{name: "each flow, at its own last stage",
			yaml: "stages:\n  - name: backlog\n    parking_lot: true\n  - name: implement\n  - name: review\nflows:\n  quick: [backlog, implement]\n",
			want: []string{
				`/repo/.agenttree.yaml:1:1: warning: flow "default" has no terminal stage, nor has any stage of the pipeline: ` +
					"an issue on it is never done, and stays at review for good" + hint,
				`/repo/.agenttree.yaml:7:3: warning: flow "quick" has no terminal stage, nor has any stage of the pipeline: ` +
					"an issue on it is never done, and stays at implement for good" + hint}},
		{name: "a pipeline with an end",
			yaml: "stages:\n  - name: implement\n  - name: accepted\n    terminal: completion\n"},
		{name: "an abandon stage is an end",
			yaml: "stages:\n  - name: implement\n  - name: not_doing\n    terminal: abandon\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(tt.yaml), catalog())
			require.NoError(t, err)
			var got []string
			for _, d := range load.Unending(cfg) {
				got = append(got, d.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
