//go:build unix

package cmdutil

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/settings"
)

// The config's sandbox reaches the local forge's CI: under user:NAME the
// CI command runs as NAME; under a container sandbox it does not run on
// the host at all, and the check says why.
func TestLocalCIFollowsTheSandbox(t *testing.T) {
	gittest.Require(t)
	gittest.Isolate(t)
	u := ostest.OtherUser(t)
	tests := []struct {
		name    string
		sandbox stages.Sandbox
		wantLog string
		wantErr string
	}{
		{name: "user", sandbox: stages.Sandbox{Kind: stages.SandboxUser, Name: u.Name}, wantLog: strconv.Itoa(u.UID) + "\n"},
		{name: "docker", sandbox: stages.Sandbox{Kind: stages.SandboxDocker, Name: "img"},
			wantErr: "sandbox: docker:img: agenttree cannot run repository code (run gates, local CI) in a container yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bare, work := gittest.NewRemote(t)
			ostest.OpenUp(t, bare)
			sha := gittest.Run(t, work, "rev-parse", "HEAD")
			cfg := settings.Defaults()
			cfg.File = filepath.Join(work, ".agenttree.yaml")
			cfg.CI.Command = "id -u"
			cfg.Sandbox = tt.sandbox
			ctx := context.Background()
			f := (&App{}).openForge(ctx, cfg, filepath.Join(work, "_agenttree"))

			checks, err := f.Checks(ctx, sha)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, forge.ErrUnavailable)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				checks, err = f.Checks(ctx, sha)
				return err != nil || checks[0].State.Done()
			}, 30*time.Second, 10*time.Millisecond)
			require.NoError(t, err)
			log, err := f.Log(ctx, checks[0], 0)
			require.NoError(t, err)
			assert.Equal(t, forge.CheckSuccess, checks[0].State, log)
			assert.Contains(t, log, "$ id -u\n"+tt.wantLog)
		})
	}
}
