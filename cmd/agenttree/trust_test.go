package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// otherAgent runs agenttree as a real second OS user, in the rig's
// repository: the another-user deployment.
type otherAgent struct {
	r    *rig
	user ostest.User
	bin  string
}

func newOtherAgent(t *testing.T, r *rig) *otherAgent {
	t.Helper()
	u := ostest.OtherUser(t)
	ostest.OpenUp(t, r.dir)
	return &otherAgent{r: r, user: u, bin: ostest.Install(t, binary)}
}

// run runs agenttree ARGS as the other user with env (NAME=VALUE).
func (o *otherAgent) run(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	return o.exec(t, env, o.bin, args...)
}

func (o *otherAgent) exec(t *testing.T, env []string, name string, args ...string) cliResult {
	t.Helper()
	cmd := o.user.Command(name, args...)
	cmd.Dir = o.r.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}, env...)
	return runCmd(t, cmd)
}

// runCmd runs cmd to its end and returns what it printed and its exit
// status.
func runCmd(t *testing.T, cmd *exec.Cmd) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err)
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// Agents as another OS user: nothing in their environment makes them a
// person, they cannot write the state, and what they ask the controller
// is held to its config, their session's issue and role.
func TestAnotherUsersAgentCannotPassTheGates(t *testing.T) {
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	other := r.create(t, "Someone else's issue", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	agent := newOtherAgent(t, r)
	layout := statedir.Layout{Root: filepath.Join(r.dir, "_agenttree")}

	tok := r.run(t, humanEnv, "token", itoa(id), "--role", "developer")
	require.Equal(t, exitOK, tok.code, tok.stderr)
	token := "AGENTTREE_TOKEN=" + strings.TrimSpace(tok.stdout)

	// No controller: a clear refusal, saying who starts it.
	res := agent.run(t, []string{token}, "next")
	assert.Equal(t, exitWaiting, res.code, res.stderr)
	assert.Contains(t, res.stderr, "no controller answers")
	assert.Contains(t, res.stderr, "`agenttree controller`")

	ctl := r.startController(t)
	require.Eventually(t, func() bool { _, err := os.Stat(layout.Socket()); return err == nil }, settleWithin, 20*time.Millisecond)

	lax := filepath.Join(t.TempDir(), "lax")
	require.NoError(t, os.MkdirAll(lax, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(lax, ".agenttree.yaml"), []byte("stages:\n  - name: implement\n  - name: accepted\n    terminal: completion\n"), 0o644))
	require.NoError(t, os.Symlink(layout.Root, filepath.Join(lax, "_agenttree")))
	ostest.OpenUp(t, lax)

	before := r.issue(t, id)
	for _, attack := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"approve as human", []string{"AGENTTREE_ROLE=human", token}, []string{"approve", itoa(id)}, "this command is for people"},
		{"approve with no role", nil, []string{"approve", itoa(id)}, "this command is for people"},
		{"approve as manager", []string{"AGENTTREE_ROLE=manager"}, []string{"approve", itoa(id)}, "this command is for people"},
		{"move as controller", []string{"AGENTTREE_ROLE=controller"}, []string{"move", itoa(id), "accepted", "--reason", "x"}, "this command is for people"},
		{"run the controller", nil, []string{"controller", "--once"}, "this command is for people"},
		{"no token", nil, []string{"next"}, "no session token"},
		{"a made-up token", []string{"AGENTTREE_TOKEN=att_0000"}, []string{"next"}, "not one this controller gave"},
		{"another issue", []string{token}, []string{"next", "-i", itoa(other)}, "is not its own"},
	} {
		t.Run(attack.name, func(t *testing.T) {
			res := agent.run(t, attack.env, attack.args...)
			assert.NotEqual(t, exitOK, res.code, "stdout %s", res.stdout)
			assert.Contains(t, res.stderr, attack.want)
		})
	}
	for _, path := range []string{
		filepath.Join(layout.Issue(id), "issue.yaml"),
		filepath.Join(layout.Issue(id), "events.jsonl"),
		filepath.Join(layout.HostIssues(), ".last-id"),
		filepath.Join(layout.Host(), "forge.yaml"),
		filepath.Join(layout.Sessions(), "forged.yaml"),
	} {
		t.Run("write "+filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			res := agent.exec(t, nil, "sh", "-c", `printf 'stage: accepted\n' >> "$1"`, "sh", path)
			assert.NotEqual(t, exitOK, res.code, "the other user wrote %s", path)
			assert.Contains(t, res.stderr, "Permission denied")
		})
	}
	after := r.issue(t, id)
	assert.Equal(t, before.Version, after.Version, "no attack changed the issue")
	assert.Equal(t, before.Stage, after.Stage)

	// A lax config of the agent's own, over the real state: refused; and
	// were it not (no token to give it away), the controller holds every
	// request to the repository's config.
	res = agent.run(t, []string{token}, "--config", filepath.Join(lax, ".agenttree.yaml"), "next")
	assert.Equal(t, exitUsage, res.code, "stdout %s", res.stdout)
	assert.Contains(t, res.stderr, "--config and AGENTTREE_CONFIG are for people")
	res = agent.run(t, []string{"AGENTTREE_CONFIG=" + filepath.Join(lax, ".agenttree.yaml")}, "next")
	assert.NotEqual(t, exitOK, res.code, "stdout %s", res.stdout)
	assert.Equal(t, "implement.feedback", r.issue(t, id).Stage)

	// Its own session's next, held to the repository's pipeline.
	res = agent.run(t, []string{token}, "next")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "implement.feedback → pr_ready")
	moved := r.issue(t, id)
	assert.Equal(t, "pr_ready", moved.Stage)
	last := moved.History[len(moved.History)-1]
	assert.Equal(t, "agent", last.Actor)
	assert.NotEmpty(t, last.Request, "the move records the request that made it")

	// Reads answer from the controller too.
	for _, read := range []struct {
		args []string
		want string
	}{
		{[]string{"status"}, "Add checkout page"},
		{[]string{"issue", "show", itoa(id)}, "Add checkout page"},
		{[]string{"status", itoa(id), "--json"}, `"stage": "pr_ready"`},
		{[]string{"inbox"}, "issue " + itoa(id)},
	} {
		res := agent.run(t, []string{token}, read.args...)
		assert.Equal(t, exitOK, res.code, "%v: stdout %s stderr %s", read.args, res.stdout, res.stderr)
		assert.Contains(t, res.stdout, read.want, "%v", read.args)
	}
	stopController(t, ctl)
}

// An agent in a container (here: root in a mount namespace of its own, as
// a container runtime makes) is an agent whatever its uid: the state
// directory records the host's namespace, and the controller tells a peer
// in another one from the kernel.
func TestAContainersAgentIsAnAgentEvenAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a mount namespace needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare")
	}
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	layout := statedir.Layout{Root: filepath.Join(r.dir, "_agenttree")}
	require.NotEmpty(t, layout.HostNamespace(), "the state directory records its host's namespace")
	tok := r.run(t, humanEnv, "token", itoa(id), "--role", "developer")
	require.Equal(t, exitOK, tok.code, tok.stderr)
	token := "AGENTTREE_TOKEN=" + strings.TrimSpace(tok.stdout)
	ctl := r.startController(t)
	require.Eventually(t, func() bool { _, err := os.Stat(layout.Socket()); return err == nil }, settleWithin, 20*time.Millisecond)

	inContainer := func(env []string, args ...string) cliResult {
		cmd := exec.Command(unshare, append([]string{"--mount", "--", binary}, args...)...)
		cmd.Dir = r.dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		return runCmd(t, cmd)
	}
	res := inContainer(nil, "approve", itoa(id))
	assert.Equal(t, exitWaiting, res.code)
	assert.Contains(t, res.stderr, "runs in a container")
	res = inContainer(nil, "next")
	assert.NotEqual(t, exitOK, res.code)
	assert.Contains(t, res.stderr, "no session token", "root in a container is not a person to the controller")
	assert.Equal(t, "implement.feedback", r.issue(t, id).Stage)

	res = inContainer([]string{token}, "next")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Equal(t, "pr_ready", r.issue(t, id).Stage)
	stopController(t, ctl)
}

// The same-user deployment: the environment can lower a person to an
// agent, a session token binds that agent to its issue and role, and no
// variable raises it back.
func TestSameUserAgentsAreHeldToTheirSession(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Mine", "--stage", "plan.review")
	other := w.create(t, "Theirs", "--stage", "implement.code")
	tok := w.run(t, humanEnv, "token", itoa(id), "--role", "developer")
	require.Equal(t, exitOK, tok.code, tok.stderr)
	token := strings.TrimSpace(tok.stdout)

	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"approve with a token", map[string]string{"AGENTTREE_TOKEN": token}, []string{"approve", itoa(id)}, "only a person can approve"},
		{"approve with a token as human", map[string]string{"AGENTTREE_TOKEN": token, "AGENTTREE_ROLE": "human"}, []string{"approve", itoa(id)}, "only a person can approve"},
		{"next on another issue", map[string]string{"AGENTTREE_TOKEN": token}, []string{"next", "-i", itoa(other)}, "is not its own"},
		{"a made-up token", map[string]string{"AGENTTREE_TOKEN": "att_forged"}, []string{"next", "-i", itoa(id)}, "not one this repository gave"},
		{"token for people", map[string]string{"AGENTTREE_ROLE": "developer"}, []string{"token", itoa(id), "--role", "developer"}, "made by people"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := w.run(t, tt.env, tt.args...)
			assert.NotEqual(t, exitOK, res.code, "stdout %s", res.stdout)
			assert.Contains(t, res.stdout+res.stderr, tt.want)
		})
	}
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"--config", agentEnv, []string{"--config", w.config, "next", "-i", itoa(id)}},
		{"AGENTTREE_CONFIG", map[string]string{"AGENTTREE_ROLE": "developer", "AGENTTREE_CONFIG": w.config}, []string{"next", "-i", itoa(id)}},
		{"--config with a token", map[string]string{"AGENTTREE_TOKEN": token}, []string{"--config", w.config, "next"}},
	} {
		t.Run("agents name no config: "+tt.name, func(t *testing.T) {
			res := invokeIn(t, w.dir, tt.env, tt.args...)
			assert.Equal(t, exitUsage, res.code, "stdout %s", res.stdout)
			assert.Contains(t, res.stderr, "--config and AGENTTREE_CONFIG are for people")
		})
	}
	assert.Equal(t, "plan.review", w.issue(t, id).Stage, "nothing moved the issue")
}
