package hooks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/agenttree/agenttree/stages"
)

// counting is a command that counts its runs in the file `count` of its
// working directory, and fails printing failure until its run number pass.
func counting(pass int, failure string) string {
	return fmt.Sprintf(`n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
if [ $n -lt %d ]; then echo %q; exit 1; fi; echo ok`, pass, failure)
}

func TestRegistryRunOptions(t *testing.T) {
	when := func(src string) *stages.Condition {
		c, err := stages.ParseCondition(src)
		require.NoError(t, err)
		return c
	}
	tests := []struct {
		name     string
		entry    stages.HookEntry
		kind     hooks.Kind
		class    hooks.Class
		reason   string
		warning  string
		attempts string // runs of counterCommand, "" when not used
	}{
		{name: "when false skips",
			entry: stages.HookEntry{Name: "run", Params: map[string]any{"command": "exit 1"}, When: when("needs_ui_review")},
			kind:  hooks.KindSkipped, reason: "run skipped: when needs_ui_review is false"},
		{name: "when true runs",
			entry: stages.HookEntry{Name: "title_set", Params: map[string]any{}, When: when("issue_id == 7")},
			kind:  hooks.KindPass},
		{name: "optional failure passes with a warning",
			entry:   stages.HookEntry{Name: "file_exists", Params: map[string]any{"file": "review.md"}, Optional: true},
			kind:    hooks.KindPass,
			warning: "optional file_exists failed: review.md: not found"},
		{name: "context label prefixes the reason",
			entry: stages.HookEntry{Name: "file_exists", Params: map[string]any{"file": "review.md"}, Context: "code review"},
			kind:  hooks.KindFail, class: hooks.ClassGeneral, reason: "code review: review.md: not found"},
		{name: "optional with a context label",
			entry:   stages.HookEntry{Name: "file_exists", Params: map[string]any{"file": "review.md"}, Optional: true, Context: "code review"},
			kind:    hooks.KindPass,
			warning: "optional file_exists failed: code review: review.md: not found"},
		{name: "a transient failure is retried",
			entry: stages.HookEntry{Name: "run", Params: map[string]any{"command": counting(2, "HTTP 429 Too Many Requests")}, Retries: 3},
			kind:  hooks.KindPass, attempts: "2"},
		{name: "without retries it fails once",
			entry: stages.HookEntry{Name: "run", Params: map[string]any{"command": counting(2, "HTTP 429 Too Many Requests")}},
			kind:  hooks.KindFail, class: hooks.ClassRateLimit, reason: "(exit 1, rate_limit)", attempts: "1"},
		{name: "a general failure is not retried",
			entry: stages.HookEntry{Name: "run", Params: map[string]any{"command": counting(100, "boom")}, Retries: 3},
			kind:  hooks.KindFail, class: hooks.ClassGeneral, attempts: "1"},
		{name: "entry timeout",
			entry: stages.HookEntry{Name: "run", Params: map[string]any{"command": "sleep 5"}, Timeout: 100 * time.Millisecond},
			kind:  hooks.KindFail, class: hooks.ClassTimeout, reason: "timed out after 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := builtin.Registry()
			r.RetryBase = time.Millisecond
			issue := hookstest.NewIssue(t)
			issue.WorkDir = issue.Dir
			entry := tt.entry
			o := r.Run(context.Background(), &entry, issue, nil)
			assert.Equal(t, tt.kind, o.Kind, o.Reason)
			assert.Equal(t, tt.class, o.Class)
			assert.Contains(t, o.Reason, tt.reason)
			if tt.warning != "" {
				require.Len(t, o.Warnings, 1)
				assert.Contains(t, o.Warnings[0], tt.warning)
			}
			if tt.attempts != "" {
				data, err := os.ReadFile(filepath.Join(issue.Dir, "count"))
				require.NoError(t, err)
				assert.Equal(t, tt.attempts, strings.TrimSpace(string(data)), "attempts")
			}
		})
	}
}
