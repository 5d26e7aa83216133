package yamlsyntax

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecoverPointsAtTheTokenThatIsWrong(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // line:col: message
	}{
		{
			name: "bad indentation in a list",
			yaml: "stages:\n  - name: backlog\n    parking_lot: true\n  - name: implement\n    role: developer\n   bad: indent\n  - name: accepted\n",
			want: "6:4: bad indentation: this line is neither an item of the list that starts at line 2 nor lined up with the keys of one",
		},
		{
			name: "bad indentation in a mapping",
			yaml: "stages:\n  - name: a\nflows:\n    quick: [a]\n  slow: [a]\n",
			want: "5:3: bad indentation: this line does not line up with the keys of the mapping that starts at line 1",
		},
		{
			name: "key indented under a scalar",
			yaml: "stages:\n  - name: implement\n    role: developer\n      bad: indent\n",
			want: "4:10: unexpected `:` here",
		},
		{
			name: "value holding a colon",
			yaml: "stages:\n  - name: backlog\n  - name: implement: x\n  - name: accepted\n",
			want: "3:20: unexpected `:` here",
		},
		{
			name: "unclosed double quote",
			yaml: "stages:\n  - name: backlog\n  - name: \"implement\n    role: developer\n  - name: accepted\n",
			want: "3:11: the string opened with \" here is never closed",
		},
		{
			name: "unclosed single quote at the end",
			yaml: "stages:\n  - name: backlog\n  - name: 'implement\n",
			want: "3:11: the string opened with ' here is never closed",
		},
		{
			name: "unclosed bracket",
			yaml: "stages:\n  - name: backlog\n  - name: implement\n    skills: [a, b\n  - name: accepted\n",
			want: "4:13: the `[` opened here is never closed",
		},
		{
			name: "unclosed bracket at the end",
			yaml: "stages:\n  - name: implement\n    skills: [a, b\n",
			want: "3:13: the `[` opened here is never closed",
		},
		{
			name: "unclosed brace",
			yaml: "stages:\n  - name: a\n    on_failure: {step_back_to: a\n  - name: b\n",
			want: "3:17: the `{` opened here is never closed",
		},
		{
			name: "tab indentation",
			yaml: "stages:\n  - name: backlog\n  - name: implement\n\trole: developer\n  - name: accepted\n",
			want: "4:1: a tab indents this line",
		},
		{
			name: "tab after spaces in the indentation",
			yaml: "stages:\n  - name: implement\n    pre_completion:\n\t  - has_commits:\n  - name: accepted\n",
			want: "4:1: a tab indents this line",
		},
		{
			// The scanner stops at the first `:` it cannot take, lines
			// below; the bracket left open is the mistake.
			name: "unclosed brace followed by comments",
			yaml: "stages:\n  - name: implement\n    pre_completion:\n      - section_check: {file: review.md, section: Critical\n" +
				"  # a comment\n  # another\n  - name: accepted\n    terminal: completion\n",
			want: "4:24: the `{` opened here is never closed",
		},
		{
			name: "key without a value in a stage",
			yaml: "stages:\n  - name: backlog\n  - name: implement\n    role\n    skill: x\n  - name: accepted\n",
			want: "4:5: `role` has no `:` after it",
		},
		{
			name: "top-level key without a value",
			yaml: "stages:\n  - name: a\nflows\ndefault_flow: x\n",
			want: "3:1: `flows` has no `:` after it",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := Recover([]byte(tt.yaml), 10)
			require.Len(t, rec.Errors, 1, "%+v", rec.Errors)
			e := rec.Errors[0]
			assert.Equal(t, tt.want, fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg))
			assert.NotEmpty(t, e.Hint)
			assert.True(t, rec.Complete, "both readings parse")
			assertKeepsPositions(t, tt.yaml, rec.Neutralised, e.Line)
		})
	}
}

// yaml.v3 names the line where a construct began, or none for line 1, and
// the scan of the text finds the token from there: these are the places
// where that scan could go wrong.
func TestRecoverFindsTheTokenPastWhatTheLineSays(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // line:col: message
	}{
		{
			name: "quote opened on the first line",
			yaml: "a: \"x\nb: 1\n",
			want: "1:4: the string opened with \" here is never closed",
		},
		{
			name: "bracket opened on the first line",
			yaml: "a: [x, y\nb: 1\n",
			want: "1:4: the `[` opened here is never closed",
		},
		{
			name: "a block scalar's text holding a colon is not a key",
			yaml: "stages:\n  - name: a\n    run: |\n      echo verdict: ok\n   bad: indent\n",
			want: "5:4: bad indentation: this line is neither an item of the list that starts at line 2 nor lined up with the keys of one",
		},
		{
			name: "key deeper than the value above it",
			yaml: "ci_polling:\n  poll_interval_s: 30 # seconds\n   max_retries: 1\n",
			want: "3:4: bad indentation: this line does not line up with the keys of the mapping that starts at line 2",
		},
		{
			name: "list item at a mapping's indentation, not right below its key",
			yaml: "stages:\n  - name: a\n    post_start:\n      - merge_pr:\n    - name: b\n",
			want: "5:5: bad indentation: this line does not line up with the keys of the mapping that starts at line 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := Recover([]byte(tt.yaml), 10)
			require.Len(t, rec.Errors, 1, "%+v", rec.Errors)
			e := rec.Errors[0]
			assert.Equal(t, tt.want, fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg))
			assert.True(t, rec.Complete, "both readings parse")
		})
	}
}

// assertKeepsPositions checks that a neutralised reading has every line of
// the file, each as long as it was, and only the neutralised ones changed
// (into comments).
func assertKeepsPositions(t *testing.T, orig string, got []byte, wrong int) {
	t.Helper()
	was, now := splitLines([]byte(orig)), splitLines(got)
	require.Len(t, now, len(was))
	assert.Contains(t, string(now[wrong-1]), "#", "line %d is neutralised", wrong)
	for i := range was {
		assert.Len(t, now[i], len(was[i]), "line %d", i+1)
		if !bytes.Equal(was[i], now[i]) {
			assert.Equal(t, byte('#'), now[i][0], "line %d: %q", i+1, now[i])
		}
	}
}

func TestRecoverReadsPastEachMistake(t *testing.T) {
	yaml := "stages:\n  - name: backlog\n\tparking_lot: true\n  - name: implement\n    skills: [a, b\n  - name: accepted\n    role: 'x\n"
	rec := Recover([]byte(yaml), 10)
	var got []string
	for _, e := range rec.Errors {
		got = append(got, fmt.Sprintf("%d:%d", e.Line, e.Col))
	}
	assert.ElementsMatch(t, []string{"3:1", "5:13", "7:11"}, got)
	assert.True(t, rec.Complete)
	assert.Equal(t, "stages:\n  - name: backlog\n    parking_lot: true\n  - name: implement\n    skills: [a, b]\n  - name: accepted\n    role: 'x'\n", string(rec.Repaired))

	rec = Recover([]byte(yaml), 2)
	assert.Len(t, rec.Errors, 2, "bounded")
	assert.False(t, rec.Complete, "a reading that still does not parse tells nothing more")
}

func TestRecoverStopsWhereNoGuessRepairs(t *testing.T) {
	// No re-indentation, quoting or closing defines an anchor: the mistake
	// is told, and nothing after it, since only the neutralised reading
	// could go on.
	yaml := "stages:\n  - name: a\n    role: *nope\n  - name: b\n    role: 'x\n"
	rec := Recover([]byte(yaml), 10)
	require.NotEmpty(t, rec.Errors)
	assert.Equal(t, 3, rec.Errors[0].Line)
	assert.False(t, rec.Complete)
}

func TestRecoverFindsNothingInGoodYAML(t *testing.T) {
	rec := Recover([]byte("stages:\n  - name: a\n"), 10)
	assert.Empty(t, rec.Errors)
	assert.True(t, rec.Complete)
}

// yaml.v3 counts lines at every break YAML 1.1 knows, not only at LF: a
// file saved with CR line ends (or holding a NEL, LS or PS) is told where
// its mistake is, not on a line above it. Found by FuzzParse
// (stages/load/testdata/fuzz/FuzzParse/crash-cr-line-ends).
func TestRecoverCountsLinesAsYAMLDoes(t *testing.T) {
	for _, br := range []string{"\n", "\r\n", "\r", "\u0085", "\u2028", "\u2029"} {
		t.Run(fmt.Sprintf("%q", br), func(t *testing.T) {
			yaml := "stages:" + br + "  - name: a" + br + "    role" + br + "    skill: x" + br
			rec := Recover([]byte(yaml), 10)
			require.Len(t, rec.Errors, 1, "%+v", rec.Errors)
			e := rec.Errors[0]
			assert.Equal(t, "3:5: `role` has no `:` after it", fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg))
			assertKeepsPositions(t, yaml, rec.Neutralised, e.Line)
		})
	}
}
