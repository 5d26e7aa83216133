package intake_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/intake"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

var (
	agent = act.Actor{Kind: act.ActorAgent, Role: "developer"}
	human = act.Actor{Kind: act.ActorHuman}
)

// rig is a config read from text and an issue store of its own.
type rig struct {
	cfg   *stages.Config
	Store *issues.Store
}

func newRig(t *testing.T, text string) *rig {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	cfg, err := load.File(path, builtin.Registry())
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	return &rig{cfg: cfg, Store: store}
}

func (r *rig) Create(ctx context.Context, req intake.NewIssue) (*issues.Issue, error) {
	return intake.Create(ctx, r.cfg, r.Store, req)
}

func TestCreateBoundsTheTitle(t *testing.T) {
	tests := []struct {
		name    string
		title   string
		wantErr string
	}{
		{name: "at the limit", title: strings.Repeat("a", intake.MaxTitleLen)},
		{name: "at the limit in runes, not bytes", title: strings.Repeat("é", intake.MaxTitleLen)},
		{name: "surrounding spaces do not count", title: "  " + strings.Repeat("a", intake.MaxTitleLen) + "  "},
		{name: "one over", title: strings.Repeat("a", intake.MaxTitleLen+1),
			wantErr: "an issue's title is at most 200 characters; this one has 201: give it a short title and put the details in the issue's documents"},
		{name: "one over in runes", title: strings.Repeat("é", intake.MaxTitleLen+1), wantErr: "this one has 201"},
		{name: "a pasted description", title: strings.Repeat("word ", 1000), wantErr: "this one has 4999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRig(t, testpipeline.Read(t, "planned"))
			iss, err := e.Create(context.Background(), intake.NewIssue{Title: tt.title})
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, strings.TrimSpace(tt.title), iss.Title)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			list, err := e.Store.List()
			require.NoError(t, err)
			assert.Empty(t, list, "nothing is written for a title too long")
		})
	}
}

func TestCreateAllocatesUniqueIDs(t *testing.T) {
	e := newRig(t, testpipeline.Read(t, "planned"))
	var wg sync.WaitGroup
	ids := make(chan int, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			iss, err := e.Create(context.Background(), intake.NewIssue{Title: "parallel"})
			if assert.NoError(t, err) {
				ids <- iss.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int]bool{}
	for id := range ids {
		assert.False(t, seen[id], "id %d given twice", id)
		seen[id] = true
	}
	assert.Len(t, seen, 20)
}

func TestCreateRejectsBadInput(t *testing.T) {
	e := newRig(t, testpipeline.Read(t, "planned"))
	_, err := e.Create(context.Background(), intake.NewIssue{Title: " "})
	assert.ErrorContains(t, err, "needs a title")
	_, err = e.Create(context.Background(), intake.NewIssue{Title: "x", Flow: "nope"})
	assert.ErrorContains(t, err, `no flow named "nope"`)
	_, err = e.Create(context.Background(), intake.NewIssue{Title: "x", Stage: "implemnt"})
	assert.ErrorContains(t, err, `has no stage "implemnt"`)
	for _, title := range []string{"Fix\x1b[2J login", "two\nlines", "evil \u202egnp.exe"} {
		_, err = e.Create(context.Background(), intake.NewIssue{Title: title})
		assert.ErrorContains(t, err, "one line of plain text", "%q", title)
	}
	// The flow and the variables decide which gates an issue meets: an
	// agent chooses neither.
	_, err = e.Create(context.Background(), intake.NewIssue{Title: "x", Vars: map[string]any{"touches_auth": false}, By: agent})
	assert.ErrorContains(t, err, "agents may not set touches_auth")
	list, err := e.Store.List()
	require.NoError(t, err)
	assert.Empty(t, list, "nothing is written for bad input")
}

// An agent cannot pick a shorter flow, or set the variables that decide
// which gates the issue meets, beyond what the config's agent_create
// allows.
func TestAgentsCreateInTheDefaultFlow(t *testing.T) {
	e := newRig(t, testpipeline.Read(t, "cli"))
	_, err := e.Create(context.Background(), intake.NewIssue{Title: "x", Flow: "quick", By: agent})
	assert.ErrorContains(t, err, "agents create issues in flow default; quick is a person's to choose")
	iss, err := e.Create(context.Background(), intake.NewIssue{Title: "x", Flow: "quick", By: human})
	require.NoError(t, err, "a person may")
	assert.Equal(t, "quick", iss.Flow)

	allowing := newRig(t, "agent_create:\n  flows: [default, quick]\n  vars: [touches_ui]\n"+testpipeline.Read(t, "cli"))
	for _, tt := range []struct {
		name string
		req  intake.NewIssue
		err  string
	}{
		{"an allowed flow", intake.NewIssue{Title: "x", Flow: "quick", By: agent}, ""},
		{"an allowed variable", intake.NewIssue{Title: "x", Vars: map[string]any{"touches_ui": true}, By: agent}, ""},
		{"another variable", intake.NewIssue{Title: "x", Vars: map[string]any{"touches_auth": false}, By: agent}, "agents may not set touches_auth"},
		{"mid-flow", intake.NewIssue{Title: "x", Stage: "implement.code", By: agent}, "agents create issues at the start of a flow"},
		{"a label", intake.NewIssue{Title: "x", Labels: []string{"gpu"}, By: agent}, ""},
		{"its node", intake.NewIssue{Title: "x", Labels: []string{"node:fast"}, By: agent}, `label "node:fast" names the node the issue runs on, which a person chooses`},
		{"a person's node", intake.NewIssue{Title: "x", Labels: []string{"node:fast"}, By: human}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := allowing.Create(context.Background(), tt.req)
			if tt.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.err)
			}
		})
	}
}
