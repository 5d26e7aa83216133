package load_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// threeMistakes has a syntax error (line 6 is indented by three spaces),
// an unknown hook and a flow naming an unknown stage.
func threeMistakes(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "three-mistakes.yaml"))
	require.NoError(t, err)
	return string(data)
}

func TestSyntaxErrorsAndTheRestAreReported(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // every diagnostic, in file order
	}{
		{
			name: "three different mistakes",
			yaml: threeMistakes(t),
			want: []string{
				"/repo/.agenttree.yaml:6:4: error: bad indentation: this line is neither an item of the list that starts at line 2 nor lined up with the keys of one (line it up with the keys it belongs with)",
				"/repo/.agenttree.yaml:8:9: error: unknown hook `file_exist` (did you mean `file_exists`?)",
				"/repo/.agenttree.yaml:12:20: error: flow \"quick\" references unknown stage \"implemnt\" (did you mean `implement`?)",
			},
		},
		{
			name: "two syntax errors",
			yaml: "stages:\n  - name: a\n\trole: x\n  - name: b\n    skills: [a.md\n  - name: done\n    terminal: completion\n    colour: red\n",
			want: []string{
				"/repo/.agenttree.yaml:3:1: error: a tab indents this line (fix the YAML syntax: indent with spaces, never tabs)",
				"/repo/.agenttree.yaml:5:13: error: the `[` opened here is never closed (close it with `]`)",
				"/repo/.agenttree.yaml:8:5: error: unknown key `colour` in stage done",
			},
		},
		{
			// Neutralising line 3 drops the stage implement, which the
			// flow names: that is not a mistake the author made.
			name: "no unknown stage for a stage whose name is broken",
			yaml: "stages:\n  - name: backlog\n  - name: \"implement\n    role: developer\n  - name: done\n    terminal: completion\nflows:\n  quick: [backlog, implement, done]\n",
			want: []string{
				"/repo/.agenttree.yaml:3:11: error: the string opened with \" here is never closed (close it with `\"`)",
			},
		},
		{
			// Neutralising line 5 leaves done without `terminal:`; the
			// repaired reading has it, so the flow is not said to be endless.
			name: "no missing terminal stage for a broken terminal line",
			yaml: "stages:\n  - name: a\n  - name: done\n    parking_lot: false\n\tterminal: completion\n  - name: gone\n    terminal: abandon\nflows:\n  quick: [a, done]\n",
			want: []string{
				"/repo/.agenttree.yaml:5:1: error: a tab indents this line (fix the YAML syntax: indent with spaces, never tabs)",
			},
		},
		{
			// Re-indenting line 4 makes `bad` a key of stage a: only the
			// repaired reading says so, and it is not reported.
			name: "no unknown key made by a repair",
			yaml: "stages:\n  - name: a\n    role: developer\n   bad: indent\n  - name: done\n    terminal: completion\n",
			want: []string{
				"/repo/.agenttree.yaml:4:4: error: bad indentation: this line is neither an item of the list that starts at line 2 nor lined up with the keys of one (line it up with the keys it belongs with)",
			},
		},
		{
			// Nothing repairs an undefined alias: the rest is not read.
			name: "nothing past a mistake with no repair",
			yaml: "stages:\n  - name: a\n    role: *nope\n  - name: b\n    colour: red\n",
			want: []string{"/repo/.agenttree.yaml:3:11: error: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, tt.yaml)
			containEach(t, diagStrings(diagnostics(t, err)), tt.want)
		})
	}
}

func TestSyntaxErrorIsAtTheLineThatIsWrong(t *testing.T) {
	// The case: yaml.v3 names line 2, where the list begins.
	_, err := parseYAML(t, threeMistakes(t))
	d := diagnostics(t, err)[0]
	assert.Equal(t, 6, d.Pos.Line)
	assert.Equal(t, 4, d.Pos.Col)
}
