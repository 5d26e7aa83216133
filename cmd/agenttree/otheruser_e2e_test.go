//go:build unix

package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/stages"
)

// remoteAgent is the program of an agent's pane in these tests: it runs,
// as the agent's OS user inside the pane (so in the session's process
// tree, where its token acts), the scripts the test hands it through a
// FIFO of its issue, and records what is typed into its pane.
const remoteAgent = `#!/bin/sh
dir=$1
out=$2/$AGENTTREE_ISSUE
mkdir -p "$out"
# A background command's input is /dev/null unless it is named: the pane.
exec 3<&0
cat <&3 > "$out/received" &
while :; do
  read -r n < "$dir/fifo-$AGENTTREE_ISSUE" || continue
  sh "$dir/cmds/$n.sh" > "$out/$n.out" 2>&1
  echo $? > "$out/$n.rc.tmp" && mv "$out/$n.rc.tmp" "$out/$n.rc"
done
`

// paneAgent drives the agents started by `agenttree start` under
// `sandbox: user:NAME`, through remoteAgent.
type paneAgent struct {
	user ostest.User
	// dir holds the program, the FIFOs and the scripts (the test's);
	// results what the agents write (theirs).
	dir, results string
	bin          string
	n            int
}

func newPaneAgent(t *testing.T) *paneAgent {
	t.Helper()
	u := ostest.OtherUser(t)
	dir, err := os.MkdirTemp("", "pane-agent-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(remoteAgent), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "cmds"), 0o755))
	results := filepath.Join(dir, "results")
	require.NoError(t, os.Mkdir(results, 0o755))
	require.NoError(t, os.Chown(results, int(u.UID), int(u.GID)))
	return &paneAgent{user: u, dir: dir, results: results, bin: ostest.Install(t, binary)}
}

// config is what the pipeline's config adds for these agents.
func (p *paneAgent) config() string {
	return fmt.Sprintf("sandbox: user:%s\nagents:\n  remote: {command: %q}\nroles:\n  developer: {agents: [remote]}\n",
		p.user.Name, "sh "+filepath.Join(p.dir, "agent.sh")+" "+p.dir+" "+p.results)
}

// fifo makes the FIFO issue id's agent reads its orders from.
func (p *paneAgent) fifo(t *testing.T, id int) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(filepath.Join(p.dir, fmt.Sprintf("fifo-%d", id)), 0o644))
}

// do has issue id's agent run script (sh, in its clone, as its user,
// with `$AT` the agenttree binary) and returns what it printed and its
// exit status.
func (p *paneAgent) do(t *testing.T, id int, script string) (string, int) {
	t.Helper()
	p.n++
	n := p.n
	script = "AT=" + p.bin + "\nexport GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com\n" + script
	require.NoError(t, os.WriteFile(filepath.Join(p.dir, "cmds", fmt.Sprint(n)+".sh"), []byte(script), 0o644))
	fifo, err := os.OpenFile(filepath.Join(p.dir, fmt.Sprintf("fifo-%d", id)), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fmt.Fprintln(fifo, n)
	require.NoError(t, err)
	require.NoError(t, fifo.Close())
	rc := filepath.Join(p.results, fmt.Sprint(id), fmt.Sprint(n)+".rc")
	var code int
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		data, err := os.ReadFile(rc)
		require.NoError(c, err)
		_, err = fmt.Sscan(string(data), &code)
		require.NoError(c, err)
	}, 2*settleWithin, lookEvery, "the agent of issue %d ran %q", id, script)
	out, _ := os.ReadFile(filepath.Join(p.results, fmt.Sprint(id), fmt.Sprint(n)+".out"))
	return string(out), code
}

// received is what was typed into issue id's agent's pane.
func (p *paneAgent) received(id int) string {
	data, _ := os.ReadFile(filepath.Join(p.results, fmt.Sprint(id), "received"))
	return string(data)
}

// The whole story with the agent as an OS user of its own, as the
// enforced deployment runs it, with no permission loosened: `start`
// gives the agent a clone of its own; it commits and runs `next`; the
// controller opens the PR; CI fails and the agent is told; it fixes it; a
// colleague's change conflicts, and the agent rebases in its clone and
// resolves it; CI passes; a person approves; the PR is merged. Nothing of
// the host's is group- or world-writable, no object or ref of the host's
// repository is the agent's, and no safe.directory exception is made. A
// token another agent of the same user reads acts for nobody.
func TestAnotherUsersAgentDoesItsWholeJob(t *testing.T) {
	// The person's credentials, in the environment of whoever starts the
	// tmux server, the controller and the agents: none reaches the agent.
	const planted = "ghp_planted_in_the_person_s_environment"
	t.Setenv("GH_TOKEN", planted)
	agent := newPaneAgent(t)
	r := newRigTmux(t, "controller", agent.config())
	ostest.OpenUp(t, r.dir)
	layout := statedir.Layout{Root: filepath.Join(r.dir, "_agenttree")}
	ctl := r.startController(t)
	require.Eventually(t, func() bool { _, err := os.Stat(layout.Socket()); return err == nil }, settleWithin, lookEvery)

	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	agent.fifo(t, id)
	res := r.run(t, humanEnv, "start", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	clone := filepath.Join(filepath.Dir(r.dir), "shop-worktrees", r.issue(t, id).Branch)
	fi, err := os.Stat(clone)
	require.NoError(t, err)
	assert.Equal(t, uint32(agent.user.UID), fi.Sys().(*syscall.Stat_t).Uid, "the clone is the agent's")

	out, code := agent.do(t, id, "env")
	require.Equal(t, 0, code, out)
	assert.NotContains(t, out, planted, "the agent's environment holds the person's credentials")
	assert.Contains(t, out, "AGENTTREE_TOKEN_FILE=")

	// Its documents are its own to write, and no one else's.
	docs := layout.Docs(id)
	out, code = agent.do(t, id, "echo notes > "+filepath.Join(docs, "notes.md"))
	require.Equal(t, 0, code, out)
	fi, err = os.Stat(docs)
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o022, "%s is %s", docs, fi.Mode())

	// The work, without what CI wants: CI fails, and the agent is told.
	out, code = agent.do(t, id, fmt.Sprintf(`printf %q > a.txt && echo checkout > checkout.txt && git add -A && git commit -qm work && "$AT" next`, agentLines))
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "implement.feedback → pr_ready")
	r.waitFor(t, id, "stepped back for CI", steppedBack(1))
	require.Eventually(t, func() bool { return strings.Contains(agent.received(id), "CI failed") }, settleWithin, lookEvery, "the agent is told CI failed: %q", agent.received(id))

	// A colleague's change to the same line lands; the agent's fix of CI
	// meets it.
	r.landOnMain(t, "a.txt", mainLines)
	out, code = agent.do(t, id, `echo ok > ok.txt && git add ok.txt && git commit -qm "make CI pass" && "$AT" next`)
	require.Equal(t, 0, code, out)
	r.waitFor(t, id, "stepped back for the conflict", steppedBack(2))
	require.Eventually(t, func() bool { return strings.Contains(agent.received(id), "conflicts with main in a.txt") }, settleWithin, lookEvery,
		"the agent is told of the conflict: %q", agent.received(id))

	// The agent rebases in its clone, resolves, and runs next.
	out, code = agent.do(t, id, fmt.Sprintf(`git fetch -q origin && { git rebase origin/main >/dev/null 2>&1; printf %q > a.txt; } && git add a.txt && git -c core.editor=true rebase --continue && "$AT" next`, resolvedLines))
	require.Equal(t, 0, code, out)
	iss := r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
	assert.Equal(t, 2, moves(iss, stages.MoveStepBack))

	r.approve(t, id)
	assert.Equal(t, resolvedLines, gittest.Run(t, r.bare(), "show", "main:a.txt")+"\n", "main holds both changes")

	// A token another session of the same user reads acts for nobody.
	other := r.create(t, "Someone else's issue", "--stage", "implement.feedback")
	agent.fifo(t, other)
	res = r.run(t, humanEnv, "start", itoa(other), "--json")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	before := r.issue(t, other)
	stolen, err := os.ReadFile(layout.AgentToken(other))
	require.NoError(t, err)
	out, code = agent.do(t, other, fmt.Sprintf(`AGENTTREE_TOKEN=$(cat %q) "$AT" next -i %d`, layout.AgentToken(other), other))
	assert.Contains(t, out, "issue 2 is blocked at implement.feedback", "its own token, read from its file, acts (its gates are checked): %s", out)
	out, code = agent.do(t, id, fmt.Sprintf(`AGENTTREE_TOKEN=$(cat %q) AGENTTREE_TOKEN_FILE= "$AT" next -i %d`, layout.AgentToken(other), other))
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, out, "is not of the session of issue")
	// Nor from a mount namespace of its own, which the controller would
	// otherwise take for a container's.
	out, code = agent.do(t, id, fmt.Sprintf(`AGENTTREE_TOKEN=$(cat %q) AGENTTREE_TOKEN_FILE= unshare -Urm "$AT" next -i %d`, layout.AgentToken(other), other))
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, out, "is not of the session of issue", "a namespace of its own does not pass for a container")
	assert.Equal(t, before.Version, r.issue(t, other).Version, "the stolen token changed nothing")
	for what, text := range map[string]string{"start --json": res.stdout + res.stderr, "the controller's log": r.controllerLog(t), "the refusal": out} {
		assert.NotContains(t, text, strings.TrimSpace(string(stolen)), "%s shows the token", what)
	}

	// The host runs nothing of the agents' clones: with an fsmonitor
	// hook in each clone's config, `start --restart` and `clean` (which
	// looks for work not saved) run git there as the agent only.
	evil := filepath.Join(agent.dir, "evil.sh")
	ran := filepath.Join(agent.results, "fsmonitor-ran")
	require.NoError(t, os.WriteFile(evil, []byte("#!/bin/sh\nid -u >> "+ran+"\nenv >> "+ran+".env\n"), 0o755))
	for _, i := range []int{id, other} {
		out, code = agent.do(t, i, "git config core.fsmonitor "+evil)
		require.Equal(t, 0, code, out)
	}
	res = r.run(t, humanEnv, "start", itoa(other), "--restart")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	res = r.run(t, humanEnv, "clean")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	_, err = os.Stat(clone)
	assert.ErrorIs(t, err, fs.ErrNotExist, "clean removed the finished issue's clone: %s", res.stdout)
	hooks, _ := os.ReadFile(ran)
	require.NotEmpty(t, strings.Fields(string(hooks)), "the clone's fsmonitor ran: clean looked at the clone")
	assert.NotContains(t, strings.Fields(string(hooks)), "0", "the clone's fsmonitor ran as root")
	hookEnv, _ := os.ReadFile(ran + ".env")
	assert.NotContains(t, string(hookEnv), planted, "the clone's fsmonitor ran with the person's credentials")
	stopController(t, ctl)

	// Nothing was loosened for it.
	assertNothingOpenTo(t, uint32(agent.user.UID), filepath.Join(r.dir, ".git"), layout.Host())
	cfg, _ := (gittestConfig(t, r.dir))
	assert.NotContains(t, cfg, "safe.directory", "no safe.directory exception")
}

// assertNothingOpenTo checks that no directory or file under roots is
// group- or world-writable or owned by uid.
func assertNothingOpenTo(t *testing.T, uid uint32, roots ...string) {
	t.Helper()
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if fi.Mode()&fs.ModeSymlink != 0 || fi.Mode()&fs.ModeSocket != 0 {
				return nil
			}
			assert.Zero(t, fi.Mode().Perm()&0o022, "%s is %s", p, fi.Mode())
			if strings.HasSuffix(p, ".token") && filepath.Base(filepath.Dir(p)) == "agents" {
				// The hand-over of an agent's own token, its to read
				// alone; the host never reads it back.
				return nil
			}
			assert.NotEqual(t, uid, fi.Sys().(*syscall.Stat_t).Uid, "%s is the agent's", p)
			return nil
		})
		require.NoError(t, err)
	}
}

// gittestConfig is every git config the host's git reads in dir, with
// where each value comes from.
func gittestConfig(t *testing.T, dir string) (string, error) {
	t.Helper()
	return gittest.Run(t, dir, "config", "--show-origin", "--list"), nil
}
