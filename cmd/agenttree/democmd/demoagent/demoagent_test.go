package demoagent_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agenttree/agenttree/internal/syncbuf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/democmd/demoagent"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

func TestClassify(t *testing.T) {
	for text, want := range map[string]demoagent.Kind{
		"Work on implement.code on branch issue-001-x (issue documents in /d), then run `agenttree next`.": demoagent.KindImplement,
		"[agenttree 1a2b] CI failed: ci\nCI failed on your branch. Read the feedback file":                 demoagent.KindCIFailed,
		"conflicts in a.txt\nYour branch conflicts with its base and could not be rebased automatically.":  demoagent.KindConflict,
		"Work on implementation_review": demoagent.KindOther,
	} {
		assert.Equal(t, want, demoagent.Classify(text), text)
	}
}

// The story's three messages, in a real clone with a real origin: the
// agent implements, fixes CI, and resolves a conflict someone landed on
// main, running `next` after each.
func TestAgentActsOnEachMessage(t *testing.T) {
	bare, clone := gittest.NewRemote(t)
	gittest.Run(t, clone, "checkout", "-q", "-b", "issue-001-checkout")
	gittest.Commit(t, clone, "a.txt", "one\ntwo, as the agent has it\nthree\n", "reword line two")

	var mu sync.Mutex
	nexts := 0
	out := &syncbuf.Buffer{}
	agent := &demoagent.Agent{
		Repo:  &gitx.Repo{Dir: clone, Env: gittest.Env()},
		Base:  "main",
		Quiet: 50 * time.Millisecond,
		Out:   out,
		Next: func(context.Context) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			nexts++
			return "issue 1 moved\n", nil
		},
	}
	pane, typed := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agent.Run(ctx, pane) }()
	t.Cleanup(func() { cancel(); typed.Close(); <-done })
	awaitNexts := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return nexts == n }, 10*time.Second, 10*time.Millisecond, "pane: %s", out)
	}
	inTree := func(file string) string {
		data, err := os.ReadFile(filepath.Join(clone, file))
		require.NoError(t, err)
		return string(data)
	}

	_, err := io.WriteString(typed, "Work on implement.code on branch issue-001-checkout, then run `agenttree next`.\n")
	require.NoError(t, err)
	awaitNexts(1)
	assert.Equal(t, "checkout page\n", inTree(demoagent.FeatureFile))
	assert.Equal(t, demoagent.ChangelogLine, inTree(demoagent.Changelog))

	_, err = io.WriteString(typed, "[agenttree 1a2b] CI failed: ci\nCI failed on your branch. Read the feedback file.\n")
	require.NoError(t, err)
	awaitNexts(2)
	assert.Equal(t, "ok\n", inTree(demoagent.FixFile))

	// Someone lands a change to the same line on main.
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, filepath.Dir(other), "clone", "-q", bare, other)
	gittest.Commit(t, other, "a.txt", "one\ntwo, as main has it\nthree\n", "main's line two")
	gittest.Commit(t, other, demoagent.Changelog, "- Fix the footer\n", "main's changelog")
	gittest.Run(t, other, "push", "-q", "origin", "main")

	_, err = io.WriteString(typed, "conflicts in a.txt\nYour branch conflicts with its base and could not be rebased automatically.\n")
	require.NoError(t, err)
	awaitNexts(3)
	assert.Equal(t, "one\ntwo, as main has it\ntwo, as the agent has it\nthree\n", inTree("a.txt"), "main's side first: a rebase replays the agent's work onto it")
	mainHead := gittest.Run(t, clone, "rev-parse", "origin/main")
	assert.Equal(t, mainHead, gittest.Run(t, clone, "merge-base", "HEAD", "origin/main"), "the branch is on top of main")
	assert.Contains(t, out.String(), "resolved a.txt keeping both sides")
	assert.Equal(t, "- Fix the footer\n"+demoagent.ChangelogLine, inTree(demoagent.Changelog))
	assert.Empty(t, gittest.Run(t, clone, "status", "--porcelain"))
}
