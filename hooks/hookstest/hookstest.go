// Package hookstest helps test hooks: an issue in a temporary directory,
// stage documents written into it, hooks called the way the engine calls
// them, and one small pipeline to load hook entries from.
package hookstest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// NewIssue returns an issue whose directory is a fresh temp dir.
func NewIssue(t testing.TB) *hooks.Issue {
	t.Helper()
	return &hooks.Issue{ID: 7, Title: "Add login", Stage: "implement.feedback", Dir: t.TempDir()}
}

// WriteFiles creates files (name → content) under dir.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// Call runs hook name of r on issue with params and env, as an entry
// without common options (no when, timeout, retries, optional).
func Call(t testing.TB, r *hooks.Registry, name string, issue *hooks.Issue, params hooks.Params, env *hooks.Env) hooks.Outcome {
	t.Helper()
	_, ok := r.Hook(name)
	require.True(t, ok, "hook %s is not registered", name)
	return r.Run(context.Background(), &stages.HookEntry{Name: name, Params: params}, issue, env)
}

// Case is one row of a table test of a hook.
type Case struct {
	Name   string
	Files  map[string]string // stage documents in the issue directory
	Params hooks.Params
	Kind   hooks.Kind
	Target string   // for redirects
	Reason []string // substrings the reason must contain
}

// RunCases runs hook of r for each case, each on a fresh issue.
func RunCases(t *testing.T, r *hooks.Registry, hook string, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			issue := NewIssue(t)
			WriteFiles(t, issue.Dir, tc.Files)
			o := Call(t, r, hook, issue, tc.Params, nil)
			assert.Equal(t, tc.Kind, o.Kind, "reason: %s", o.Reason)
			assert.Equal(t, tc.Target, o.Target)
			for _, s := range tc.Reason {
				assert.Contains(t, o.Reason, s)
			}
			if tc.Kind == hooks.KindPass {
				assert.Empty(t, o.Reason)
			}
		})
	}
}

// Pipeline is the config the hook tests load entries from: implement.code
// runs one hook, in the list LIST (pre_completion, post_start, ...), and
// implement.fix and done are there to be named by stage references.
const Pipeline = `stages:
  - name: implement
    substages:
      - name: code
        LIST:
          - HOOK
      - name: fix
        redirect_only: true
  - name: done
`

// LoadEntry loads Pipeline with hook (one list item as YAML, e.g.
// `file_exists: review.md`) in list of implement.code against catalog, and
// returns the loaded entry and config.
func LoadEntry(catalog stages.HookCatalog, list, hook string) (*stages.HookEntry, *stages.Config, error) {
	yaml := strings.NewReplacer("LIST", list, "HOOK", hook).Replace(Pipeline)
	cfg, err := load.Parse(stages.FileName, []byte(yaml), catalog)
	if err != nil {
		return nil, nil, err
	}
	n, _ := cfg.Node("implement.code")
	var entries []*stages.HookEntry
	switch list {
	case "pre_completion":
		_, entries = n.Leaving(nil)
	case "post_start":
		entries = n.Entering(nil)
	case "post_completion":
		entries = n.Completed(nil)
	}
	if len(entries) != 1 {
		return nil, cfg, fmt.Errorf("%s of implement.code holds %d hooks, want 1", list, len(entries))
	}
	return entries[0], cfg, nil
}
