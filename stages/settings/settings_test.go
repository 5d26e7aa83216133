package settings_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/settings"
)

// The defaults the declaration gives are those agenttree has always had
// (docs/CONFIG.md): a default written wrong in the declaration shows here.
func TestDefaults(t *testing.T) {
	want := &stages.Config{
		Forge:         stages.ForgeLocal,
		DefaultBranch: "main",
		CIPolling: stages.CIPolling{Timeout: 600 * time.Second, PollInterval: 30 * time.Second, MinInterval: 30 * time.Second,
			MaxInterval: 300 * time.Second, NewRunTimeout: 1800 * time.Second, MaxRetries: 5},
		Conflicts:      stages.ConflictHandling{AutoRebase: true, NotifyOnRebase: true, MaxConflictRetries: 3},
		Events:         stages.Events{Mode: stages.EventsPoll, Listen: "127.0.0.1:0"},
		Controller:     stages.Controller{Interval: 10 * time.Second, Concurrency: 4},
		CircuitBreaker: stages.CircuitBreaker{HalfOpenAfter: 2, NoProgress: 3, SameError: 3},
		Tmux:           stages.Tmux{Session: "{{project}}-{{role}}-{{issue_id}}"},
		Worktrees:      stages.Worktrees{Dir: "../{{project}}-worktrees"},
		State:          stages.State{Backend: stages.StateFiles, Nodes: stages.Nodes{Capacity: 10}},
	}
	assert.Equal(t, want, settings.Defaults())
	assert.Equal(t, &stages.RoleSessions{Role: "reviewer", Fallback: stages.FallbackNextInList, MaxRestarts: 2, StallAfter: 900 * time.Second},
		settings.RoleDefaults("reviewer"))
}

// Each call gives a config of its own: a caller that changes its
// defaults changes no other's.
func TestDefaultsAreFresh(t *testing.T) {
	a := settings.Defaults()
	a.CIPolling.MaxRetries = 99
	assert.Equal(t, 5, settings.Defaults().CIPolling.MaxRetries)
}

// walk calls f on every key of ks and of their sections, with its
// dotted path.
func walk(ks []settings.Key, path string, f func(k settings.Key, path string)) {
	for _, k := range ks {
		p := k.Name
		if path != "" {
			p = path + "." + k.Name
		}
		f(k, p)
		if k.Type == settings.TypeNames {
			p += ".*"
		}
		walk(k.Keys, p, f)
	}
}

// Every declaration is well formed: an enum lists its values, its default
// is one of them, and a least value is of a type that has one.
func TestDeclarationsAreWellFormed(t *testing.T) {
	walk(settings.TopLevel(), "", func(k settings.Key, path string) {
		switch k.Type {
		case settings.TypeEnum:
			require.NotEmpty(t, k.Enum, path)
			if k.Default != "" {
				assert.Contains(t, k.Enum, k.Default, path)
			}
		case settings.TypeInt:
			assert.NotPanics(t, func() { k.MinInt() }, path)
		case settings.TypeDuration:
			assert.NotPanics(t, func() { k.MinDuration() }, path)
		default:
			assert.Empty(t, k.Min, "%s: only an int or a duration has a least value", path)
			assert.False(t, k.Positive, "%s: only a duration is positive", path)
		}
		if k.Type == settings.TypeSection || k.Type == settings.TypeNames {
			assert.NotEmpty(t, k.Keys, path)
		}
	})
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		text string
		want time.Duration
		err  bool
	}{
		{text: "600", want: 600 * time.Second},
		{text: "1.5", want: 1500 * time.Millisecond},
		{text: "90s", want: 90 * time.Second},
		{text: "5m", want: 5 * time.Minute},
		{text: "-1", err: true},
		{text: "-1s", err: true},
		{text: "soon", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := settings.ParseDuration(tt.text)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
