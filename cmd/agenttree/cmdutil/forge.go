package cmdutil

import (
	"context"
	"path/filepath"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/watch"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/hooks/shell"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// openForge returns the config's forge, opened on first use: most commands
// never touch a PR and should not pay for reading remotes and tokens.
func (a *App) openForge(ctx context.Context, cfg *stages.Config, stateDir string) *forge.LazyForge {
	repoDir := filepath.Dir(cfg.File)
	return forge.Lazy(func() (forge.Forge, error) {
		if cfg.Forge == "github" {
			ev := cfg.Events
			return watch.Open(ctx, github.Options{Repo: cfg.GitHub.Repo, Host: cfg.GitHub.Host, RepoDir: repoDir, Logger: a.Logger()},
				watch.Events{Mode: string(ev.Mode), URL: ev.URL, Listen: ev.Listen, SecretFile: ev.SecretFile, ForwardCommand: ev.ForwardCommand, StateDir: stateDir, Logger: a.Logger()})
		}
		// CI runs the agents' code: as the sandbox's user, never the host's.
		ciUser, ciRefused := shell.HostUser(cfg.Sandbox)
		return local.New(ctx, local.Options{StateDir: stateDir, RepoDir: repoDir, DefaultBranch: cfg.DefaultBranch,
			Project: cfg.Project, CICommand: cfg.CI.Command, CITimeout: cfg.CI.Timeout, CIMaxParallel: cfg.CI.MaxParallel, CIEnv: cfg.CI.Env, CIUser: ciUser, CIRefused: ciRefused})
	})
}

func openGit(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} }
