package hooks

import (
	"log/slog"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// Env is what hooks may use of the world beyond the issue: the forge, git,
// the config's settings and a clock. The engine builds it.
type Env struct {
	Forge forge.Forge
	// Git opens git in a work tree: the host's git, run the careful way
	// (gitx). A fake would only hide what git does; tests run real git.
	Git    func(dir string) *gitx.Repo
	Config *stages.Config
	Remote string
	Now    func() time.Time
	Log    *slog.Logger
	// DryRun asks hooks to change nothing outside the issue: no pushes,
	// rebases, reruns or merges; they report what they would do.
	DryRun bool
}

func (e *Env) now() time.Time {
	if e == nil || e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Env) logger() *slog.Logger {
	if e == nil || e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}
