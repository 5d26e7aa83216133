//go:build linux

package sessions_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/cleanup"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
	"github.com/agenttree/agenttree/stages"
)

// boxAgent is the program of the image the stand-in runtime runs: once
// the test puts a file named go in the image, the agent does its
// issue's job in its clone (/work) and reports to its documents (job),
// then waits; restarted, it carries on waiting. Its job: fetch from
// origin and rebase on the remote's main, commit, and plant a program
// in the clone's config (fsmonitor, hooks) for whoever runs git there
// next. Issue 2's agent leaves a file uncommitted; issue 3's points its
// branch at a commit of a repository of the host's (secret), through
// objects/info/alternates, for the host to fetch.
const boxAgent = `#!/bin/sh
img=${0%/*}
out=/agenttree/docs
[ -e "$out/job" ] && exec cat
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com
while [ ! -e "$img/go" ]; do sleep 0.1; done
{
	echo "pwd $(pwd)"
	echo "origin $(git remote get-url origin)"
	[ -e "$(cat "$img/hostrepo")" ] && echo "the host's repository is here"
	touch /agenttree/origin/planted 2>/dev/null || echo "origin is read-only"
	git fetch -q origin && git rebase -q origin/main && echo "rebased on: $(git log -1 --format=%s origin/main)"
	echo "$AGENTTREE_ISSUE" > "work-$AGENTTREE_ISSUE.txt" && git add . && git commit -qm "the agent's work" && echo "committed $(git rev-parse HEAD)"
	git config core.fsmonitor "$img/planted.sh"
	git config core.hooksPath "$img/hooks"
	case $AGENTTREE_ISSUE in
	2) echo wip > wip.txt ;;
	3) cat "$img/secret" > .git/objects/info/alternates && cat "$img/secret.sha" > ".git/$(git symbolic-ref HEAD)" ;;
	esac
	git status --porcelain >/dev/null
} > "$out/job.tmp" 2>&1
mv "$out/job.tmp" "$out/job"
exec cat
`

// planted is what the agent plants in its clone's config: it writes the
// mount namespace it runs in to the agent's documents when it runs in
// the agent's container, else to a file of the host's (host), which no
// container has.
const planted = `#!/bin/sh
readlink /proc/self/ns/mnt >> /agenttree/docs/ran 2>/dev/null || readlink /proc/self/ns/mnt >> %q
`

// An agent in a container works in a clone of its own: it fetches from
// the host's repository (mounted read-only), rebases, commits; the host
// takes its commit at TakeWork, reuses the clone as it is at a restart,
// and at clean removes the clone of a finished issue whose work is
// pushed and keeps one with uncommitted work. What the agent plants in
// its clone's config runs only in containers, never on the host, and a
// clone pointing at a repository of the host's (alternates) gets none
// of it taken in.
func TestAnAgentInAContainerCommitsAndTheHostRunsNothingOfItsClone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the stand-in container runtime needs root")
	}
	for _, tool := range []string{"unshare", "chroot"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("the stand-in container runtime needs " + tool)
		}
	}
	r := sessionstest.NewRigWith(t, boxAgent, func(sock, agent string) string {
		return fmt.Sprintf(sessionstest.RigConfig, sock, agent, agent, "sandbox: docker:agent:1")
	})
	bin := standIn(t, r.Bin)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	listenController(r)
	ctx := context.Background()
	layout := r.E.Store.Layout()

	hostMark := filepath.Join(t.TempDir(), "ran")
	_, secret := gittest.NewRemote(t)
	secretSHA := gittest.Commit(t, secret, "secret.txt", "the host's secret\n", "secret")
	hooks := filepath.Join(r.Bin, "hooks")
	require.NoError(t, os.Mkdir(hooks, 0o755))
	script := fmt.Sprintf(planted, hostMark)
	for name, content := range map[string]string{
		"hostrepo": r.Repo, "secret": filepath.Join(secret, ".git", "objects") + "\n", "secret.sha": secretSHA + "\n",
		"planted.sh": script, "hooks/reference-transaction": script, "hooks/post-checkout": script, "hooks/post-index-change": script,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(r.Bin, name), []byte(content), 0o755))
	}

	var recs []*sessions.Record
	for _, title := range []string{"Finished", "Work in progress", "Smuggler"} {
		iss := r.Create(title, "work")
		res, err := r.M.Start(ctx, iss.ID, sessions.Options{})
		require.NoError(t, err, title)
		assert.True(t, res.Session.Clone, "%s: a clone, not a linked worktree", title)
		assert.DirExists(t, filepath.Join(res.Session.Worktree, ".git"))
		recs = append(recs, res.Session)
	}

	// A colleague's change lands on the remote's main; the host fetches
	// it, as before it tells an agent to rebase.
	gittest.Commit(t, r.Repo, "main.txt", "main\n", "a colleague's change")
	r.Git(r.Repo, "push", "-q", "origin", "main")
	require.NoError(t, r.M.Refresh(ctx, recs[0].Issue))
	require.NoError(t, os.WriteFile(filepath.Join(r.Bin, "go"), nil, 0o644))

	commits := make([]string, len(recs))
	for i, rec := range recs {
		job := filepath.Join(layout.Docs(rec.Issue), "job")
		require.Eventually(t, func() bool { _, err := os.Stat(job); return err == nil }, 30*time.Second, 50*time.Millisecond, "issue %d's agent did its job", rec.Issue)
		said := readAll(t, job)
		assert.Contains(t, said, "pwd /work\norigin /agenttree/origin\norigin is read-only\nrebased on: a colleague's change\ncommitted ", "issue %d", rec.Issue)
		assert.NotContains(t, said, "the host's repository is here", "issue %d", rec.Issue)
		_, commits[i], _ = strings.Cut(said, "committed ")
		commits[i], _, _ = strings.Cut(commits[i], "\n")
		require.Len(t, commits[i], 40, "issue %d: %s", rec.Issue, said)
	}

	// The host takes the agent's commit, served by git in a container.
	require.NoError(t, r.M.TakeWork(ctx, recs[0].Issue))
	assert.Equal(t, commits[0], r.Git(r.Repo, "rev-parse", "refs/heads/"+recs[0].Branch))
	assert.Contains(t, readAll(t, filepath.Join(bin, "runs")),
		"run --rm --network=none --pull=never -i -v "+recs[0].Worktree+":"+recs[0].Worktree+":ro agent:1 git upload-pack "+recs[0].Worktree+"\n")

	// A clone whose branch points, through its alternates, at a commit
	// of a repository of the host's: git serving it in the container
	// finds no such object, and the host takes in nothing.
	err := r.M.TakeWork(ctx, recs[2].Issue)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "take issue 3's work from its agent's clone "+recs[2].Worktree)
	assert.False(t, r.HasBranch(recs[2].Branch))
	assert.Error(t, exec.Command("git", "-C", r.Repo, "cat-file", "-e", secretSHA).Run(), "the secret is not in the host's repository")

	// A restart finds the clone on its branch and reuses it as it is,
	// running no git there: with an extension no git knows in the
	// clone's config, any would fail.
	config := filepath.Join(recs[0].Worktree, ".git", "config")
	before := readAll(t, config)
	require.NoError(t, os.WriteFile(config, []byte(strings.Replace(before, "repositoryformatversion = 0", "repositoryformatversion = 1", 1)+
		"[extensions]\n\tplantedByTheAgent = true\n"), 0o644))
	res, err := r.M.Start(ctx, recs[0].Issue, sessions.Options{Restart: true})
	require.NoError(t, err)
	assert.Equal(t, sessions.Restarted, res.State)
	assert.Equal(t, recs[0].Worktree, res.Session.Worktree)
	assert.True(t, res.Session.Clone)
	require.NoError(t, os.WriteFile(config, []byte(before), 0o644))

	// Issue 1's work is pushed (as its PR is); 1 and 2 are finished.
	r.Git(r.Repo, "push", "-q", "origin", recs[0].Branch)
	for _, rec := range recs[:2] {
		_, err := r.E.Settle(ctx, rec.Issue, stages.TerminalCompletion, "merged by hand")
		require.NoError(t, err)
	}
	cleaned, err := cleanup.Clean(ctx, r.M, false)
	require.NoError(t, err)
	require.Len(t, cleaned, 3)
	assert.Equal(t, cleanup.Removed, cleaned[0].Outcome, cleaned[0].Why)
	assert.NoDirExists(t, recs[0].Worktree)
	assert.Equal(t, cleanup.Kept, cleaned[1].Outcome)
	assert.Equal(t, cleanup.Uncommitted, cleaned[1].KeptFor)
	assert.Contains(t, cleaned[1].Why, "uncommitted work in "+recs[1].Worktree+" (wip.txt)")
	assert.FileExists(t, filepath.Join(recs[1].Worktree, "wip.txt"))
	assert.Equal(t, cleanup.NotFinished, cleaned[2].KeptFor)
	assert.Contains(t, readAll(t, filepath.Join(bin, "runs")),
		"run --rm --network=none --pull=never -w /work -v "+recs[1].Worktree+":/work:ro agent:1 git status --porcelain -z --untracked-files=all\n")

	// What the agents planted ran in their containers, never on the host.
	assert.NoFileExists(t, hostMark, "a program planted in a clone ran on the host")
	host, err := os.Readlink("/proc/self/ns/mnt")
	require.NoError(t, err)
	for _, rec := range recs {
		ran := strings.Fields(readAll(t, filepath.Join(layout.Docs(rec.Issue), "ran")))
		require.NotEmpty(t, ran, "issue %d: the planted program runs where git runs in the clone", rec.Issue)
		assert.NotContains(t, ran, host, "issue %d", rec.Issue)
	}
}

// A restart in a container reads the clone's branch from its files,
// running no git there, and starts nothing in what is not a clone on the
// issue's branch; whatever symlink is there, it reads nothing outside
// the clone.
func TestStartInAContainerFindsTheClonesBranchInItsFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "HEAD")
	for _, tt := range []struct {
		name string
		// make puts what is at the clone's path clone, for branch.
		make func(t *testing.T, r *sessionstest.Rig, clone, branch string)
		msg  string
	}{
		{name: "another branch", msg: "is on branch elsewhere, not the issue's issue-001-boxed; switch it back (`git switch issue-001-boxed` in the agent's container)",
			make: func(t *testing.T, r *sessionstest.Rig, clone, _ string) {
				r.Git(filepath.Dir(clone), "init", "-q", "-b", "elsewhere", clone)
			}},
		{name: "detached", msg: "is on no branch (HEAD is detached: a rebase under way?)",
			make: func(t *testing.T, r *sessionstest.Rig, clone, _ string) {
				r.Git(filepath.Dir(clone), "clone", "-q", r.Repo, clone)
				r.Git(clone, "switch", "-q", "--detach")
			}},
		{name: "a linked worktree", msg: "its .git is a file: a linked worktree of the host's repository, made before agents in containers got clones; `git worktree remove` it",
			make: func(t *testing.T, r *sessionstest.Rig, clone, branch string) {
				r.Git(r.Repo, "worktree", "add", "-q", "-b", branch, clone)
			}},
		{name: ".git a symlink", msg: "is not a clone agenttree made (.git is a symlink)",
			make: func(t *testing.T, r *sessionstest.Rig, clone, _ string) {
				require.NoError(t, os.Mkdir(clone, 0o755))
				require.NoError(t, os.Symlink(filepath.Join(r.Repo, ".git"), filepath.Join(clone, ".git")))
			}},
		{name: "HEAD a symlink out", msg: "is not a clone agenttree made (.git/HEAD is a symlink)",
			make: func(t *testing.T, r *sessionstest.Rig, clone, branch string) {
				require.NoError(t, os.MkdirAll(filepath.Join(clone, ".git"), 0o755))
				require.NoError(t, os.WriteFile(outside, []byte("ref: refs/heads/"+branch+"\n"), 0o644))
				require.NoError(t, os.Symlink(outside, filepath.Join(clone, ".git", "HEAD")))
			}},
		{name: "no .git", msg: "is not a clone agenttree made (it has no .git)",
			make: func(t *testing.T, r *sessionstest.Rig, clone, _ string) { require.NoError(t, os.Mkdir(clone, 0o755)) }},
		{name: "the clone a symlink", msg: "is a symlink, not a directory",
			make: func(t *testing.T, r *sessionstest.Rig, clone, _ string) {
				require.NoError(t, os.Symlink(r.Repo, clone))
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := sessionstest.NewRig(t, "sandbox: docker:agent:1")
			bin := standIn(t, r.Bin)
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			listenController(r)
			iss := r.Create("Boxed", "work")
			clone := filepath.Join(filepath.Dir(r.Repo), "shop-worktrees", iss.Branch)
			require.NoError(t, os.MkdirAll(filepath.Dir(clone), 0o755))
			tt.make(t, r, clone, iss.Branch)

			_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "issue 1's clone")
			assert.Contains(t, err.Error(), tt.msg)
			assert.NoFileExists(t, filepath.Join(bin, "run.args"), "no container ran")
			_, err = os.Lstat(clone)
			assert.NoError(t, err, "what was there is left alone")
		})
	}
}
