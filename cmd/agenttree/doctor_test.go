package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/trustcmd"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// Never advice doctor gives: an agent in root's group writes whatever
// that group may, and a safe.directory exception lets git run the config
// of a repository another user owns.
var badAdvice = []string{"usermod -aG 0", "safe.directory"}

func assertNoBadAdvice(t *testing.T, out string) {
	t.Helper()
	for _, bad := range badAdvice {
		assert.NotContains(t, out, bad)
	}
}

func TestDoctorSaysTheDeploymentAndWhatItGuarantees(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "One")
	res := w.run(t, humanEnv, "doctor")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "deployment:      same user")
	assert.Contains(t, res.stdout, "advisory")
	assert.Contains(t, res.stdout, "— a person")
	assert.Contains(t, res.stdout, "ok   host files written by the host only")
	assertNoBadAdvice(t, res.stdout)

	status := w.run(t, humanEnv, "status")
	assert.Contains(t, status.stdout, "advisory; see `agenttree doctor`", "status says it too")
}

// Agents as another OS user that cannot write their documents: doctor
// says so, and how to fix it, never by adding the agent to a group of
// root's or the host's.
func TestDoctorChecksTheAgentsUser(t *testing.T) {
	u := ostest.OtherUser(t)
	w := newWorkspace(t, "sandbox: user:"+u.Name+"\n"+testpipeline.Read(t, "cli"))
	w.create(t, "One")
	res := w.run(t, humanEnv, "doctor", "--json")
	assert.Equal(t, exitBlocked, res.code, res.stderr)
	var rep trustcmd.DoctorReport
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep), res.stdout)
	assert.Equal(t, trustcmd.DeployOtherUser, rep.Deployment)
	assert.Contains(t, rep.Guarantees, "enforced")
	require.NotEmpty(t, rep.Findings)
	f := rep.Findings[0]
	assert.False(t, f.OK)
	assert.Contains(t, f.Detail, "cannot write its stage documents")
	assert.Contains(t, f.Fix, "doctor --fix")
	assertNoBadAdvice(t, res.stdout)
}

// doctor tells the deployment of whoever runs it: the agents' own user
// is an agent of another OS user (not a container's, whatever the machine
// runs in), and a process of the owner's user is an agent by its session
// token or role, in the same-user deployment. An agent's --fix is
// refused as people-only commands are, and changes nothing.
func TestDoctorSaysWhoRunsIt(t *testing.T) {
	u := ostest.OtherUser(t)
	w := newWorkspace(t, "sandbox: user:"+u.Name+"\n"+testpipeline.Read(t, "cli"))
	w.create(t, "One")
	ostest.OpenUp(t, w.dir)
	bin := ostest.Install(t, binary)
	stateDir := filepath.Join(w.dir, "_agenttree")
	require.NoError(t, os.Chmod(stateDir, 0o775))

	asAgent := func(t *testing.T, args ...string) cliResult {
		cmd := u.Command(bin, args...)
		cmd.Dir = w.dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
		return runCmd(t, cmd)
	}
	res := asAgent(t, "doctor", "--json")
	var rep trustcmd.DoctorReport
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep), "stdout %s stderr %s", res.stdout, res.stderr)
	assert.False(t, rep.Person)
	assert.Equal(t, trustcmd.DeployOtherUser, rep.Deployment, "its own deployment")
	assert.Contains(t, strings.Join(rep.Agent, "\n"), "is not the state directory's owner")
	res = asAgent(t, "doctor")
	assert.Contains(t, res.stdout, "— an agent")
	assert.Contains(t, res.stdout, "deployment:      another OS user (yours")
	assert.NotContains(t, res.stdout, "deployment:      containers")
	assertNoBadAdvice(t, res.stdout)

	res = asAgent(t, "doctor", "--fix")
	assert.Equal(t, exitWaiting, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "doctor --fix is for people")

	for _, tt := range []struct {
		name string
		env  map[string]string
		why  string
	}{
		{"a session token", map[string]string{"AGENTTREE_TOKEN": "att_x"}, "session token (AGENTTREE_TOKEN)"},
		{"a session token file", map[string]string{"AGENTTREE_TOKEN_FILE": "/nonexistent"}, "AGENTTREE_TOKEN_FILE"},
		{"an agent's role", agentEnv, `agent role "developer"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := invokeIn(t, w.dir, tt.env, "doctor", "--json")
			var rep trustcmd.DoctorReport
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep), "stdout %s stderr %s", res.stdout, res.stderr)
			assert.False(t, rep.Person)
			assert.Equal(t, trustcmd.DeploySameUser, rep.Deployment)
			assert.Contains(t, strings.Join(rep.Agent, "\n"), tt.why)
			assert.Contains(t, rep.Guarantees, "advisory")

			res = invokeIn(t, w.dir, tt.env, "doctor", "--fix")
			assert.Equal(t, exitWaiting, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
			assert.Contains(t, res.stderr, "doctor --fix is for people")
		})
	}
	fi, err := os.Stat(stateDir)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o775), fi.Mode().Perm(), "no agent's --fix changed anything")
}

// A repository whose state directory, host files and .git others may
// write: doctor names each directory, what an agent could do and the
// fix; `doctor --fix` makes it right (and the agents' group the
// documents'), a second doctor says ok, and a second --fix changes
// nothing. The agent's user then cannot move host/ aside.
func TestDoctorFindsAndFixesWhatOthersMayWrite(t *testing.T) {
	u := ostest.OtherUser(t)
	w := newForgeRepo(t, "sandbox: user:"+u.Name+"\n"+testpipeline.Read(t, "local-forge"))
	w.create(t, "One")
	ostest.OpenUp(t, w.dir)
	stateDir := filepath.Join(w.dir, "_agenttree")
	git := filepath.Join(w.dir, ".git")
	exposed := map[string]os.FileMode{
		stateDir:                        0o775,
		filepath.Join(stateDir, "host"): 0o775,
		filepath.Join(stateDir, "host", "issues", "001"): 0o777,
		git:                                 0o775,
		filepath.Join(git, "objects"):       0o775,
		filepath.Join(git, "refs", "heads"): 0o775,
	}
	for dir, mode := range exposed {
		require.NoError(t, os.Chmod(dir, mode))
		require.NoError(t, os.Lchown(dir, -1, u.GID))
	}

	res := w.run(t, humanEnv, "doctor", "--json")
	assert.Equal(t, exitBlocked, res.code, res.stderr)
	var rep trustcmd.DoctorReport
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep), res.stdout)
	assert.Contains(t, rep.Guarantees, "NOT while")
	failed := map[string]string{}
	for _, f := range rep.Findings {
		if !f.OK && f.Path != "" {
			failed[f.Path] = f.Detail + "\n" + f.Fix
		}
	}
	for dir := range exposed {
		require.Contains(t, failed, dir, "doctor names %s", dir)
		assert.Contains(t, failed[dir], "may write it")
		assert.Contains(t, failed[dir], "an agent that may write it can")
		assert.Contains(t, failed[dir], "chmod g-w,o-w "+dir)
	}
	assertNoBadAdvice(t, res.stdout)

	fixed := w.run(t, humanEnv, "doctor", "--fix")
	assert.Equal(t, exitOK, fixed.code, "stdout %s stderr %s", fixed.stdout, fixed.stderr)
	for dir := range exposed {
		assert.Contains(t, fixed.stdout, "fixed: chmod g-w,o-w "+dir+" (was ")
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Zero(t, fi.Mode().Perm()&0o022, dir)
	}
	assert.Contains(t, fixed.stdout, "fixed: chgrp "+u.Name, "the documents take the agents' group")
	assertNoBadAdvice(t, fixed.stdout)

	again := w.run(t, humanEnv, "doctor")
	assert.Equal(t, exitOK, again.code, again.stdout)
	assert.NotContains(t, again.stdout, "FAIL")
	assertNoBadAdvice(t, again.stdout)
	again = w.run(t, humanEnv, "doctor", "--fix")
	assert.Equal(t, exitOK, again.code, again.stdout)
	assert.Contains(t, again.stdout, "fixed: nothing")
	assert.NotContains(t, again.stdout, "fixed: chmod")

	mv := u.Command("mv", filepath.Join(stateDir, "host"), filepath.Join(stateDir, "host.aside"))
	out, err := mv.CombinedOutput()
	require.Error(t, err, "the agent moved host/ aside: %s", out)
	assert.Contains(t, string(out), "Permission denied")
	gittest.Run(t, w.dir, "status") // git still works for the person
}

// With `sandbox: user:NAME` and no such user, `doctor --fix` run by root
// makes it, with a group of its own that the stage documents take; run
// again, it changes nothing.
func TestDoctorFixMakesTheAgentsUser(t *testing.T) {
	ostest.OtherUser(t) // root, useradd and setpriv, or skipped
	const name = "agenttree-doctor"
	userdel := func() { _ = exec.Command("userdel", "--remove", name).Run() }
	userdel()
	t.Cleanup(userdel)
	w := newWorkspace(t, "sandbox: user:"+name+"\n"+testpipeline.Read(t, "cli"))

	res := w.run(t, humanEnv, "doctor")
	assert.Equal(t, exitBlocked, res.code, res.stdout)
	assert.Contains(t, res.stdout, "FAIL agents' OS user "+name)
	assert.Contains(t, res.stdout, "useradd --system")

	res = w.run(t, humanEnv, "doctor", "--fix")
	assert.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "fixed: made the agents' user "+name)
	assert.Contains(t, res.stdout, "fixed: made "+filepath.Join(w.dir, "_agenttree", "issues"))
	assert.Contains(t, res.stdout, "ok   agents' OS user "+name)
	_, err := user.Lookup(name)
	require.NoError(t, err)

	res = w.run(t, humanEnv, "doctor", "--fix")
	assert.Equal(t, exitOK, res.code, res.stdout)
	assert.Contains(t, res.stdout, "fixed: nothing")

	// The first issue's documents are the agent's to write.
	id := w.create(t, "One")
	fi, err := os.Stat(w.issueDir(id))
	require.NoError(t, err)
	g, err := user.LookupGroup(name)
	require.NoError(t, err)
	_, gid, _ := identity.FileOwner(fi)
	assert.Equal(t, g.Gid, strconv.Itoa(gid))
	assert.NotZero(t, fi.Mode().Perm()&0o020)
}
