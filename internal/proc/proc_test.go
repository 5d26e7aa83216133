//go:build unix

package proc_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/proc"
)

// startChild runs a shell that starts a background sleep and prints its
// pid, then waits; it returns the command and the grandchild's pid.
func startChild(t *testing.T, ctx context.Context, setup func(*exec.Cmd)) (*exec.Cmd, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.CommandContext(ctx, "sh", "-c", `sleep 60 & echo $! > "$1"; wait`, "sh", pidFile)
	setup(cmd)
	cmd.WaitDelay = time.Second
	require.NoError(t, cmd.Start())
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	return cmd, pid
}

func TestGroupCancelKillsGrandchildren(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd, grandchild := startChild(t, ctx, proc.Group)
	require.True(t, proc.Alive(grandchild))
	cancel()
	_ = cmd.Wait()
	assert.Equal(t, 128+int(syscall.SIGKILL), proc.ExitStatus(cmd.ProcessState))
	require.Eventually(t, func() bool { return !proc.Alive(grandchild) }, 5*time.Second, 10*time.Millisecond,
		"the background sleep outlived its group")
}

func TestGroupGracefulTerminatesThenKillGroupCleansUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd, grandchild := startChild(t, ctx, proc.GroupGraceful)
	cancel()
	_ = cmd.Wait()
	assert.Equal(t, 128+int(syscall.SIGTERM), proc.ExitStatus(cmd.ProcessState))
	require.NoError(t, ignoreDone(proc.KillGroup(cmd)))
	require.Eventually(t, func() bool { return !proc.Alive(grandchild) }, 5*time.Second, 10*time.Millisecond)
}

func TestWithoutGroupTheGrandchildSurvives(t *testing.T) {
	// The control for the two tests above: a plain CommandContext kills
	// only the shell.
	ctx, cancel := context.WithCancel(context.Background())
	cmd, grandchild := startChild(t, ctx, func(*exec.Cmd) {})
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	cancel()
	_ = cmd.Wait()
	time.Sleep(100 * time.Millisecond)
	assert.True(t, proc.Alive(grandchild))
}

func TestDetachStartsANewSession(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	proc.Detach(cmd)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pgid, err := syscall.Getpgid(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, cmd.Process.Pid, pgid, "a session leader leads its own group")
	assert.NotEqual(t, syscall.Getpgrp(), pgid)
}

func TestAliveAndExitStatus(t *testing.T) {
	assert.True(t, proc.Alive(os.Getpid()))
	assert.False(t, proc.Alive(0))

	cmd := exec.Command("sh", "-c", "exit 3")
	_ = cmd.Run()
	assert.Equal(t, 3, proc.ExitStatus(cmd.ProcessState))
	assert.False(t, proc.Alive(cmd.Process.Pid), "a reaped process is gone")
	assert.Equal(t, -1, proc.ExitStatus(nil))

	// A zombie (exited, not yet reaped) is not alive.
	z := exec.Command("true")
	require.NoError(t, z.Start())
	t.Cleanup(func() { _ = z.Wait() })
	require.Eventually(t, func() bool { return !proc.Alive(z.Process.Pid) }, 5*time.Second, 10*time.Millisecond)
}

func ignoreDone(err error) error {
	if err == os.ErrProcessDone {
		return nil
	}
	return err
}

func TestPeakRSS(t *testing.T) {
	cmd := exec.Command("sh", "-c", "true")
	require.NoError(t, cmd.Run())
	assert.Positive(t, proc.PeakRSSKiB(cmd.ProcessState))
	assert.Zero(t, proc.PeakRSSKiB(nil))
}
