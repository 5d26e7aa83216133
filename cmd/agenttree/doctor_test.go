package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/cli/trustcmd"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func TestDoctorSaysTheDeploymentAndWhatItGuarantees(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "One")
	res := w.run(t, humanEnv, "doctor")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "deployment:      same user")
	assert.Contains(t, res.stdout, "advisory")
	assert.Contains(t, res.stdout, "— a person")
	assert.Contains(t, res.stdout, "ok   host files written by the host only")

	status := w.run(t, humanEnv, "status")
	assert.Contains(t, status.stdout, "advisory; see `agenttree doctor`", "status says it too")
}

// Agents as another OS user that cannot write their documents: doctor
// says so, and how to fix it.
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
	assert.Contains(t, f.Fix, "usermod -aG")
}
