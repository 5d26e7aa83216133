package shell

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
)

// A command reports outputs as a JSON object: the last one in its output,
// however it is laid out and whatever follows it. Output that starts like
// an object but is none is warned of, never dropped in silence.
func TestJSONOutputs(t *testing.T) {
	tests := []struct {
		name    string
		output  string
		want    map[string]string
		warning string // a substring of the one warning; "" for none
	}{
		{name: "the last line", output: "building\nok\n{\"coverage\": 85.5, \"name\": \"x\"}\n",
			want: map[string]string{"coverage": "85.5", "name": "x"}},
		{name: "pretty-printed", output: "building\n{\n  \"coverage\": 85.5,\n  \"name\": \"x\",\n  \"files\": [\n    \"a.go\",\n    \"b.go\"\n  ]\n}\n",
			want: map[string]string{"coverage": "85.5", "name": "x", "files": `["a.go","b.go"]`}},
		{name: "pretty-printed with objects inside on lines of their own",
			output: "{\n  \"status\": \"ok\",\n  \"jobs\": [\n    {\n      \"id\": 1\n    },\n    {\n      \"id\": 2\n    }\n  ]\n}\n",
			want:   map[string]string{"status": "ok", "jobs": `[{"id":1},{"id":2}]`}},
		{name: "followed by a line", output: "{\"coverage\": \"85\"}\ndone in 3s\n",
			want: map[string]string{"coverage": "85"}},
		{name: "pretty-printed, followed by lines", output: "{\n  \"coverage\": \"85\"\n}\n\ncleaning up\nbye\n",
			want: map[string]string{"coverage": "85"}},
		{name: "two JSON values: the last one", output: "{\"coverage\": \"70\", \"old\": \"x\"}\n{\"coverage\": \"85\"}\n",
			want: map[string]string{"coverage": "85"}},
		{name: "indented, with CRLF line ends", output: "  {\"coverage\": \"85\"}\r\nok\r\n",
			want: map[string]string{"coverage": "85"}},
		{name: "no JSON", output: "not {json\nall good\n", want: map[string]string{}},
		{name: "broken JSON", output: "{\"coverage\": 85,}\n",
			want: map[string]string{}, warning: `the output's line "{\"coverage\": 85,}" looks like a JSON object but could not be read (invalid character '}'`},
		{name: "broken JSON after a good object", output: "{\"coverage\": \"85\"}\n{\"coverage\": 90\n",
			want: map[string]string{"coverage": "85"}, warning: "the outputs are those of the JSON object before it"},
		{name: "a pretty-printed object cut short", output: "{\n  \"jobs\": [\n    {\n      \"id\": 1\n    },\n",
			want: map[string]string{}, warning: "(unexpected EOF)"},
		{name: "a good object after a broken one", output: "{oops}\n{\"coverage\": \"85\"}\n",
			want: map[string]string{"coverage": "85"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := jsonOutputs(tt.output)
			assert.Equal(t, tt.want, got)
			if tt.warning == "" {
				assert.Empty(t, warnings)
				return
			}
			require.Len(t, warnings, 1)
			assert.Contains(t, warnings[0], tt.warning)
		})
	}
}

// The outcome of `run` carries the outputs of a pretty-printed object and
// the warning of one it could not read.
func TestRunReadsJSONOutputs(t *testing.T) {
	tests := []struct {
		name    string
		command string
		kind    hooks.Kind
		outputs map[string]string
		warning string
	}{
		{name: "pretty-printed, then a line", command: `printf '{\n  "coverage": 85.5,\n  "report": "cover.html"\n}\nuploaded\n'`,
			kind: hooks.KindPass, outputs: map[string]string{"coverage": "85.5", "report": "cover.html"}},
		{name: "broken JSON is warned of", command: `echo '{"coverage": 85.5,'; echo '}'`,
			kind: hooks.KindPass, warning: "looks like a JSON object but could not be read"},
		{name: "on failure too", command: `printf '{\n  "failed": 3\n}\n'; echo FAIL; exit 1`,
			kind: hooks.KindFail, outputs: map[string]string{"failed": "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			issue := hookstest.NewIssue(t)
			issue.WorkDir = t.TempDir()
			o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": tt.command}, nil)
			require.Equal(t, tt.kind, o.Kind, o.Reason)
			for k, v := range tt.outputs {
				assert.Equal(t, v, o.Outputs[k], "output %s", k)
			}
			if tt.warning == "" {
				assert.Empty(t, o.Warnings)
				return
			}
			require.Len(t, o.Warnings, 1)
			assert.Contains(t, o.Warnings[0], tt.warning)
		})
	}
}
