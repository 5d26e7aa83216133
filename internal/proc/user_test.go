//go:build unix

package proc_test

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/proc"
)

// asUserHelperEnv makes the test binary, re-run as another user, run
// TestHelperAsUser: it asks AsUser to run `id -u` as the user the
// variable names, and prints the error or id's output.
const asUserHelperEnv = "PROC_TEST_AS_USER"

func TestHelperAsUser(t *testing.T) {
	name := os.Getenv(asUserHelperEnv)
	if name == "" {
		t.Skip("the child TestAsUserNeedsRoot starts")
	}
	u, err := proc.LookupUser(name)
	require.NoError(t, err)
	cmd := exec.Command("id", "-u")
	if err := proc.AsUser(cmd, u); err != nil {
		require.ErrorIs(t, err, proc.ErrNeedsRoot)
		assert.Nil(t, cmd.SysProcAttr, "a refused command is left as it was")
		assert.Nil(t, cmd.Env)
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		return
	}
	out, err := cmd.Output()
	require.NoError(t, err)
	os.Stdout.WriteString("uid: " + string(out))
}

// A command made with AsUser runs as the other user, in its groups, with
// its HOME, USER and LOGNAME, and keeps what Group or Detach set, made
// before or after.
func TestAsUserRunsAsTheOtherUser(t *testing.T) {
	other := ostest.OtherUser(t)
	u, err := proc.LookupUser(other.Name)
	require.NoError(t, err)
	assert.EqualValues(t, other.UID, u.UID)
	assert.EqualValues(t, other.GID, u.GID)
	assert.Contains(t, u.Groups, u.GID)

	tests := []struct {
		name  string
		setup func(*testing.T, *exec.Cmd)
	}{
		{"Group first", func(t *testing.T, cmd *exec.Cmd) { proc.Group(cmd); require.NoError(t, proc.AsUser(cmd, u)) }},
		{"AsUser first", func(t *testing.T, cmd *exec.Cmd) { require.NoError(t, proc.AsUser(cmd, u)); proc.Group(cmd) }},
		{"with Detach", func(t *testing.T, cmd *exec.Cmd) { proc.Detach(cmd); require.NoError(t, proc.AsUser(cmd, u)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.CommandContext(context.Background(), "sh", "-c",
				`echo "$(id -u) $(id -g) $(id -G)|$HOME|$USER|$LOGNAME|$KEPT"; ps -o pgid= -p $$`)
			cmd.Env = append(os.Environ(), "HOME=/root", "KEPT=yes")
			tt.setup(t, cmd)
			out, err := cmd.Output()
			require.NoError(t, err)
			first, pgid, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
			ids, rest, _ := strings.Cut(first, "|")
			fields := strings.Fields(ids)
			require.GreaterOrEqual(t, len(fields), 3, "id printed %q", ids)
			assert.Equal(t, strconv.Itoa(other.UID), fields[0])
			assert.Equal(t, strconv.Itoa(other.GID), fields[1])
			assert.NotContains(t, fields[2:], "0", "root's group is not kept")
			assert.Equal(t, u.Home+"|"+other.Name+"|"+other.Name+"|yes", rest)
			assert.Equal(t, strconv.Itoa(cmd.Process.Pid), strings.TrimSpace(pgid), "the command leads a group of its own")
		})
	}
}

// Only root switches users: another user is refused before anything
// runs, and the command is left as it was; a user that is already the
// target needs no switch.
func TestAsUserNeedsRoot(t *testing.T) {
	other := ostest.OtherUser(t)
	exe := ostest.Executable(t)
	tests := []struct {
		target string
		want   string
	}{
		{"root", "error: run id as root: only root may run commands as another user, and this process runs as uid " + strconv.Itoa(other.UID)},
		{other.Name, "uid: " + strconv.Itoa(other.UID)},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			cmd := other.Command(exe, "-test.run=^TestHelperAsUser$")
			cmd.Env = append(os.Environ(), asUserHelperEnv+"="+tt.target)
			cmd.Dir = "/"
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), tt.want)
		})
	}
}

func TestLookupUserUnknown(t *testing.T) {
	_, err := proc.LookupUser("agenttree-no-such-user")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "user agenttree-no-such-user")
	var unknown user.UnknownUserError
	assert.ErrorAs(t, err, &unknown)
}
