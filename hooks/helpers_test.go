package hooks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

// newIssue returns an issue whose directory is a fresh temp dir.
func newIssue(t *testing.T) *Issue {
	t.Helper()
	return &Issue{ID: 7, Title: "Add login", Stage: "implement.feedback", Dir: t.TempDir()}
}

// writeFiles creates files (name → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// callHook runs a built-in hook directly, without Registry.Run's options.
func callHook(t *testing.T, ctx context.Context, name string, issue *Issue, params Params) Outcome {
	t.Helper()
	def, ok := Builtin().lookup(name)
	require.True(t, ok, "hook %s is not registered", name)
	entry := &stages.HookEntry{Name: name, Params: params}
	return def.Run(ctx, &Call{Issue: issue, Entry: entry, Params: params})
}

// hookCase is one row of a table test of a document hook.
type hookCase struct {
	name   string
	files  map[string]string
	params Params
	kind   Kind
	target string   // for redirects
	reason []string // substrings the reason must contain
}

func runCases(t *testing.T, hook string, cases []hookCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			issue := newIssue(t)
			writeFiles(t, issue.Dir, tc.files)
			o := callHook(t, context.Background(), hook, issue, tc.params)
			assert.Equal(t, tc.kind, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, tc.target, o.Target)
			for _, s := range tc.reason {
				assert.Contains(t, o.Reason, s)
			}
			if tc.kind == KindPass {
				assert.Empty(t, o.Reason)
			}
		})
	}
}
