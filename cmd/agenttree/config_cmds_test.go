package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/configcmd"
)

// A syntax error (line 6 indented by three spaces), an unknown hook and a
// flow naming an unknown stage: validate reports all three where they are.
func TestValidateReportsEveryMistakeWhereItIs(t *testing.T) {
	config, err := os.ReadFile(filepath.Join("..", "..", "stages", "load", "testdata", "three-mistakes.yaml"))
	require.NoError(t, err)
	w := newWorkspace(t, string(config))
	want := []configcmd.DiagnosticJSON{
		{File: w.config, Line: 6, Col: 4, Severity: "error",
			Message: "bad indentation: this line is neither an item of the list that starts at line 2 nor lined up with the keys of one",
			Hint:    "line it up with the keys it belongs with"},
		{File: w.config, Line: 8, Col: 9, Severity: "error", Message: "unknown hook `file_exist`", Hint: "did you mean `file_exists`?"},
		{File: w.config, Line: 12, Col: 20, Severity: "error", Message: `flow "quick" references unknown stage "implemnt"`, Hint: "did you mean `implement`?"},
	}

	r := w.run(t, humanEnv, "validate", "--json")
	require.Equal(t, exitUsage, r.code, r.stderr)
	var rep configcmd.ValidateReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	assert.False(t, rep.Valid)
	assert.Equal(t, want, rep.Diagnostics)

	r = w.run(t, humanEnv, "validate")
	require.Equal(t, exitUsage, r.code)
	assert.Empty(t, r.stdout)
	assert.Equal(t, []string{
		w.config + ":6:4: error: " + want[0].Message + " (" + want[0].Hint + ")",
		w.config + ":8:9: error: " + want[1].Message + " (" + want[1].Hint + ")",
		w.config + ":12:20: error: " + want[2].Message + " (" + want[2].Hint + ")",
		w.config + ": 3 errors, 0 warnings",
	}, strings.Split(strings.TrimSpace(r.stderr), "\n"))
}

func TestValidateListsWarningsOfAValidFile(t *testing.T) {
	w := newWorkspace(t, "stages:\n  - name: a\n  - name: done\n    terminal: completion\nroles:\n  reviwer: {}\n")
	r := w.run(t, humanEnv, "validate", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep configcmd.ValidateReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	assert.True(t, rep.Valid)
	require.Len(t, rep.Diagnostics, 1, r.stdout)
	assert.Equal(t, "warning", string(rep.Diagnostics[0].Severity))
	assert.Equal(t, 6, rep.Diagnostics[0].Line)

	r = w.run(t, humanEnv, "validate")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ": ok (canonical form, 2 stages, flows: default, 1 warning)")
	assert.Contains(t, r.stderr, w.config+":6:3: warning: no stage has role")

	// Other commands sum the warnings up in one line, and point to validate.
	r = w.run(t, humanEnv, "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "note: "+w.config+" has 1 warning (line 6: no stage has role \"reviwer\"; its entry in `roles:` is unused); `agenttree validate` lists them\n", r.stderr)
}
