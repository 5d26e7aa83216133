//go:build unix

package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/ostest"
)

// With CIUser (`sandbox: user:NAME`) the CI command runs as that user, in
// a checkout it owns, and cannot write the host's files; the runner,
// which records the verdict, stays the host's. Without it, CI runs as the
// host's user, as before. Not parallel: it sets the environment, which
// reaches CI through the runner, as ci.env lists it.
func TestCIRunsAsTheSandboxUser(t *testing.T) {
	u := ostest.OtherUser(t)
	host := t.TempDir() // root's, 0755: the host's files
	require.NoError(t, os.Chmod(host, 0o755))
	t.Setenv("HOST_DIR", host)

	tests := []struct {
		name    string
		user    string
		command string
		state   forge.CheckState
		wantLog []string
		written string // a file the command wrote; "" for none
	}{
		{name: "writes its checkout and reads the repository", user: u.Name,
			command: `id -u; git rev-parse HEAD; touch written && test -O written`,
			state:   forge.CheckSuccess, wantLog: []string{strconv.Itoa(u.UID) + "\n"}},
		{name: "cannot write the host's directory", user: u.Name, command: `id -u; touch "$HOST_DIR/written"`,
			state: forge.CheckFailure, wantLog: []string{strconv.Itoa(u.UID) + "\n", "Permission denied"}},
		{name: "cannot replace its checkout", user: u.Name, command: `mv "$PWD" "$PWD.moved"`,
			state: forge.CheckFailure, wantLog: []string{"Permission denied"}},
		{name: "no sandbox: the host's user", command: `id -u; touch "$HOST_DIR/written"`,
			state: forge.CheckSuccess, wantLog: []string{strconv.Itoa(os.Geteuid()) + "\n"}, written: filepath.Join(host, "written")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := newForge(t, local.Options{CICommand: tt.command, CIUser: tt.user, CIEnv: []string{"HOST_DIR"}})
			ostest.OpenUp(t, e.bare)
			sha := e.feature(t)
			t.Cleanup(func() { _ = os.Remove(filepath.Join(host, "written")) })

			c := waitCI(t, f, sha)
			log, err := f.Log(context.Background(), c, 0)
			require.NoError(t, err)
			assert.Equal(t, tt.state, c.State, log)
			for _, s := range tt.wantLog {
				assert.Contains(t, log, s)
			}
			if tt.state == forge.CheckSuccess && tt.user != "" {
				assert.Contains(t, log, sha, "git works in the checkout")
			}
			if tt.written != "" {
				assert.FileExists(t, tt.written)
			} else {
				assert.NoFileExists(t, filepath.Join(host, "written"))
			}
			e.noWorkTrees(t)
		})
	}
}

// A CI user that does not exist fails the check, saying why, rather than
// running CI as the host's user.
func TestCIUserMustExist(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "touch ran", CIUser: "agenttree-no-such-user"})
	sha := e.feature(t)
	c := waitCI(t, f, sha)
	assert.Equal(t, forge.CheckFailure, c.State)
	log, err := f.Log(context.Background(), c, 0)
	require.NoError(t, err)
	assert.Contains(t, log, "sandbox: user:agenttree-no-such-user: user agenttree-no-such-user")
	assert.Contains(t, log, "exit status 126")
	e.noWorkTrees(t)
}

// CIRefused (a container sandbox) keeps CI from running on the host: Checks
// says why, as a setup problem, and nothing is checked out or recorded.
func TestCIRefused(t *testing.T) {
	t.Parallel()
	why := errors.New("sandbox: docker:img: not on the host")
	e, f := newForge(t, local.Options{CICommand: "touch ran", CIRefused: why})
	sha := e.feature(t)
	_, err := f.Checks(context.Background(), sha)
	require.ErrorIs(t, err, why)
	assert.ErrorIs(t, err, forge.ErrUnavailable)
	assert.Contains(t, err.Error(), "local CI of "+sha[:12])
	assert.NoFileExists(t, filepath.Join(e.state, "host", "forge", "checks", sha+".yaml"))
	e.noWorkTrees(t)
}
