//go:build windows

package proc_test

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/proc"
)

// DETACHED_PROCESS, which package syscall does not define.
const detachedProcess = 0x00000008

// helperEnv makes the test binary, run as a child, sleep in
// TestHelperSleeps instead of testing.
const helperEnv = "PROC_TEST_HELPER"

func TestHelperSleeps(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("the child the tests below start")
	}
	time.Sleep(time.Minute)
}

func sleeper(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperSleeps$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	return cmd
}

func TestCreationFlags(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*exec.Cmd)
		want  uint32
	}{
		{name: "Group", setup: proc.Group, want: syscall.CREATE_NEW_PROCESS_GROUP},
		{name: "GroupGraceful", setup: proc.GroupGraceful, want: syscall.CREATE_NEW_PROCESS_GROUP},
		{name: "Detach", setup: proc.Detach, want: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("cmd")
			cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true, CreationFlags: syscall.CREATE_UNICODE_ENVIRONMENT}
			tt.setup(cmd)
			assert.Equal(t, tt.want|syscall.CREATE_UNICODE_ENVIRONMENT, cmd.SysProcAttr.CreationFlags)
			assert.True(t, cmd.SysProcAttr.HideWindow, "settings made before are kept")
		})
	}
}

func TestGroupCancelKillsTheProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := sleeper(ctx)
	proc.Group(cmd)
	require.NoError(t, cmd.Start())
	require.True(t, proc.Alive(cmd.Process.Pid))
	cancel()
	_ = cmd.Wait()
	assert.Equal(t, 1, proc.ExitStatus(cmd.ProcessState), "os.Process.Kill ends a process with exit code 1")
	assert.False(t, proc.Alive(cmd.Process.Pid))
	assert.ErrorIs(t, proc.KillGroup(cmd), os.ErrProcessDone)
}

func TestDetachedProcessRuns(t *testing.T) {
	cmd := sleeper(context.Background())
	proc.Detach(cmd)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	assert.True(t, proc.Alive(cmd.Process.Pid))
}

func TestAliveAndExitStatus(t *testing.T) {
	assert.True(t, proc.Alive(os.Getpid()))
	assert.False(t, proc.Alive(0))

	cmd := exec.Command("cmd", "/c", "exit 3")
	require.Error(t, cmd.Run())
	assert.Equal(t, 3, proc.ExitStatus(cmd.ProcessState))
	assert.False(t, proc.Alive(cmd.Process.Pid), "an exited process is not alive")
	assert.Equal(t, -1, proc.ExitStatus(nil))
}
