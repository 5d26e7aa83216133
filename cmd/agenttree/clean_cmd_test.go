package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
)

func TestCleanCommand(t *testing.T) {
	server := newTmuxServer(t)
	w := newForgeRepo(t, fmt.Sprintf(sessionsPipeline, server.socket))
	worktree := map[int]string{}
	for _, title := range []string{"Done and pushed", "Done with work left", "Still going"} {
		id := w.create(t, title)
		r := w.run(t, humanEnv, "start", itoa(id), "--json")
		require.Equal(t, exitOK, r.code, r.stderr)
		var started struct {
			Session struct{ Worktree, Branch string } `json:"session"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &started), r.stdout)
		worktree[id] = started.Session.Worktree
	}
	gittest.Commit(t, worktree[1], "done.txt", "done\n", "the work")
	gittest.Run(t, worktree[1], "push", "-q", "origin", "HEAD")
	wip := filepath.Join(worktree[2], "wip.txt")
	require.NoError(t, os.WriteFile(wip, []byte("wip\n"), 0o644))
	for _, id := range []int{1, 2} {
		r := w.run(t, humanEnv, "move", itoa(id), "accepted", "--reason", "merged by hand")
		require.Equal(t, exitOK, r.code, r.stderr)
	}

	for _, step := range []struct {
		name   string
		env    map[string]string
		args   []string
		before func()
		code   int
		want   []string
		gone   []string
		kept   []string
	}{
		{name: "agents do not clean", env: agentEnv, args: []string{"clean"}, code: exitWaiting,
			want: []string{"only a person cleans up agent sessions"}, kept: []string{worktree[1], worktree[2], worktree[3]}},
		{name: "dry run", args: []string{"clean", "--dry-run"}, code: exitBlocked,
			want: []string{
				"issue 1: would remove worktree " + worktree[1] + ", branch issue-001-done-and-pushed, tmux session " + agentSession(1) + ", session record\n",
				"issue 2: kept: uncommitted work in " + worktree[2] + " (wip.txt); commit and push, or remove it yourself with `git worktree remove --force " + worktree[2] + "`\n",
				"issue 3: kept: not finished: at stage work\n",
			},
			kept: []string{worktree[1], worktree[2], worktree[3]}},
		{name: "clean", args: []string{"clean"}, code: exitBlocked,
			want: []string{"issue 1: removed worktree " + worktree[1], "issue 2: kept: uncommitted work", "issue 3: kept: not finished"},
			gone: []string{worktree[1]}, kept: []string{worktree[2], worktree[3]}},
		{name: "work saved", args: []string{"clean"}, before: func() { require.NoError(t, os.Remove(wip)) }, code: exitOK,
			want: []string{"issue 2: removed worktree " + worktree[2], "issue 3: kept: not finished"},
			gone: []string{worktree[1], worktree[2]}, kept: []string{worktree[3]}},
		{name: "again", args: []string{"clean"}, code: exitOK, want: []string{"issue 3: kept: not finished: at stage work\n"},
			kept: []string{worktree[3]}},
	} {
		t.Run(step.name, func(t *testing.T) {
			if step.before != nil {
				step.before()
			}
			env := step.env
			if env == nil {
				env = humanEnv
			}
			r := w.run(t, env, step.args...)
			assert.Equal(t, step.code, r.code, r.stdout+r.stderr)
			for _, s := range step.want {
				assert.Contains(t, r.stdout+r.stderr, s)
			}
			for _, dir := range step.gone {
				assert.NoDirExists(t, dir)
			}
			for _, dir := range step.kept {
				assert.DirExists(t, dir)
			}
		})
	}
	assert.NotContains(t, server.run(t, "list-sessions", "-F", "#{session_name}"), agentSession(1)+"\n")

	r := w.run(t, humanEnv, "clean", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var list []struct {
		Issue   int    `json:"issue"`
		Outcome string `json:"outcome"`
		KeptFor string `json:"kept_for"`
		Stage   string `json:"stage"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	require.Len(t, list, 1)
	assert.Equal(t, 3, list[0].Issue)
	assert.Equal(t, "kept", list[0].Outcome)
	assert.Equal(t, "not_finished", list[0].KeptFor)
	assert.Equal(t, "work", list[0].Stage)
}
