// Package local is the forge that needs no server: the remote is a bare git
// repository on this machine (the work repository's origin), and pull
// requests, approvals, comments, review threads and CI results are YAML
// records under <state dir>/forge/:
//
//	forge/prs/N.yaml        one pull request (Record)
//	forge/checks/SHA.yaml   the CI state of one commit
//	forge/checks/SHA.N.log  the tail of attempt N's output
//	forge/checks/SHA.N.result  attempt N's exit status, until recorded
//	forge/locks/            file locks that serialize writers
//
// A PR's head is always read live from the bare repository's
// refs/heads/<branch>, so pushing to the branch updates the PR. CI is the
// configured shell command, started on demand by Checks in a detached
// runner: agenttree itself, re-run with cirun.Command (see packages ci and
// cirun).
package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local/ci"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/statedir"
)

// Options configure the local forge.
type Options struct {
	// StateDir is the _agenttree directory; records go under StateDir/forge.
	StateDir string
	// RepoDir is the working clone whose Remote is the bare repository.
	RepoDir string
	// Remote names the bare repository in RepoDir; default "origin".
	Remote string
	// DefaultBranch is the base of new PRs; default: the bare repository's
	// HEAD branch.
	DefaultBranch string
	// Project names the forge in PR URLs (local:<project>#N); default: the
	// work repository's directory name.
	Project string
	// CICommand runs with `sh -c` in a fresh checkout of the commit under
	// test, in the background (see Forge.Checks); exit 0 passes. Empty: no
	// CI, reported as one skipped (passing) check.
	CICommand string
	// CITimeout bounds one CI run (default 30 minutes); a run that takes
	// longer is recorded as timed_out.
	CITimeout time.Duration
	// CIGrace is how long a CI command that reached CITimeout has between
	// TERM and KILL to stop its test servers and write its last words
	// (default 10 seconds). Windows has no TERM: there the command is
	// killed at CITimeout, and what it started keeps running.
	CIGrace time.Duration
	// CIMaxParallel bounds the CI runs going at once (ci.max_parallel): a
	// head pushed while that many run is queued until one ends. 0: no
	// bound.
	CIMaxParallel int
	// CIUser is the OS user CICommand runs as (`sandbox: user:NAME`), in
	// a checkout handed over to it, so that the agents' code never runs
	// with the host's authority; the runner itself, which records the
	// result, stays this process's user, which must be root. Empty: this
	// process's user.
	CIUser string
	// CIEnv names the variables of this process's environment CICommand
	// gets besides those every program needs (PATH, HOME, LANG, ...) and
	// agenttree's own (CI, AGENTTREE_CI_SHA): `ci.env`. It gets no other,
	// as the agents' code would read the person's credentials in it.
	CIEnv []string
	// CIRefused, when set, is why CICommand may not run on this host (a
	// container sandbox, whose CI does not run in containers yet):
	// Checks reports it and runs nothing.
	CIRefused error
	// Runner is the command that runs one CI attempt in the background;
	// the attempt's arguments are appended to it (see cirun.Start).
	// Default: this executable with cirun.Command, agenttree's hidden
	// subcommand. Under `go test` this executable is the test binary,
	// which serves as the runner through localtest.RunnerMain.
	Runner []string
	// GitTimeout bounds each git command (default gitx.DefaultTimeout).
	GitTimeout time.Duration
	// LockTimeout bounds waiting for another writer (default 30 seconds).
	LockTimeout time.Duration
	// DismissStaleApprovals makes an approval count only while the PR head
	// is the commit that was approved. Off by default, as on GitHub.
	DismissStaleApprovals bool
}

// Forge is the local forge. It implements forge.Forge.
type Forge struct {
	opts    Options
	dir     string // StateDir/forge, absolute: CI runners work elsewhere
	bare    *gitx.Repo
	bareDir string
	ci      *ci.Runs
	// requests counts the calls a GitHub forge would make a request of.
	requests atomic.Int64
}

var (
	_ forge.Forge          = (*Forge)(nil)
	_ forge.RequestCounter = (*Forge)(nil)
)

// Requests is how many requests GitHub would have been sent for what this
// forge was asked: one per call, one per 50 PRs of a batch.
func (f *Forge) Requests() int64 { return f.requests.Load() }

// botName is who agenttree is in the forge's records: the author of the
// commits it makes and of the comments Comment and Close post.
const botName = "agenttree"

// Identity and settings of the commits the forge itself makes (merges):
// it acts as the server, so the developer's hooks and signing do not apply.
var forgeEnv = []string{
	"GIT_COMMITTER_NAME=agenttree", "GIT_COMMITTER_EMAIL=agenttree@localhost",
	"GIT_AUTHOR_NAME=agenttree", "GIT_AUTHOR_EMAIL=agenttree@localhost",
	"GIT_CONFIG_COUNT=3",
	"GIT_CONFIG_KEY_0=commit.gpgSign", "GIT_CONFIG_VALUE_0=false",
	"GIT_CONFIG_KEY_1=core.hooksPath", "GIT_CONFIG_VALUE_1=/dev/null",
	"GIT_CONFIG_KEY_2=rebase.autoStash", "GIT_CONFIG_VALUE_2=false",
}

// New opens the local forge for opts.RepoDir, whose remote must be a bare
// repository on this machine.
func New(ctx context.Context, opts Options) (*Forge, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	top, bareDir, err := locate(ctx, opts)
	if err != nil {
		return nil, err
	}
	stateDir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("forge: local: %w", err)
	}
	f := &Forge{
		opts:    opts,
		dir:     statedir.Layout{Root: stateDir}.Forge(),
		bare:    &gitx.Repo{Dir: bareDir, Timeout: opts.GitTimeout, Env: forgeEnv},
		bareDir: bareDir,
	}
	f.opts.Project = cmp.Or(f.opts.Project, filepath.Base(top))
	if f.opts.DefaultBranch == "" {
		f.opts.DefaultBranch = f.headBranch(ctx)
	}
	if err := f.makeDirs(); err != nil {
		return nil, err
	}
	f.ci, err = ci.New(ci.Options{Dir: filepath.Join(f.dir, "checks"), LockDir: filepath.Join(f.dir, "locks"), Bare: f.bare,
		Command: opts.CICommand, Timeout: opts.CITimeout, Grace: opts.CIGrace, User: opts.CIUser, Env: opts.CIEnv,
		Refused: opts.CIRefused, Runner: opts.Runner, LockTimeout: opts.LockTimeout, MaxParallel: opts.CIMaxParallel})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// withDefaults checks that opts name the directories the forge needs and
// fills in the defaults of what they leave unset. Project and
// DefaultBranch come from the repositories, so New fills them in; package
// ci fills in the CI settings.
func (opts Options) withDefaults() (Options, error) {
	if opts.StateDir == "" {
		return opts, errors.New("forge: local: no state directory (the _agenttree directory) given")
	}
	if opts.RepoDir == "" {
		return opts, errors.New("forge: local: no repository directory given")
	}
	opts.Remote = cmp.Or(opts.Remote, gitx.DefaultRemote)
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 30 * time.Second
	}
	return opts, nil
}

// locate finds the top of the work tree at opts.RepoDir and the bare
// repository its remote is.
func locate(ctx context.Context, opts Options) (top, bareDir string, err error) {
	work, err := gitx.Open(ctx, opts.RepoDir)
	if err != nil {
		return "", "", fmt.Errorf("forge: local: %w", err)
	}
	work.Timeout = opts.GitTimeout
	top, err = work.Run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", "", fmt.Errorf("forge: local: %w", err)
	}
	bareDir, err = bareRepo(ctx, work, top, opts.Remote)
	if err != nil {
		return "", "", err
	}
	return top, bareDir, nil
}

// headBranch is the bare repository's HEAD branch: the base of PRs that
// name none. A HEAD git cannot read (detached, unborn) gives main.
func (f *Forge) headBranch(ctx context.Context) string {
	if b, err := f.bare.CurrentBranch(ctx); err == nil && b != "" {
		return b
	}
	return "main"
}

// makeDirs makes the record directories under forge/.
func (f *Forge) makeDirs() error {
	for _, d := range []string{"prs", "checks", "locks"} {
		if err := os.MkdirAll(filepath.Join(f.dir, d), 0o755); err != nil {
			return fmt.Errorf("forge: local: %w", err)
		}
	}
	return nil
}

// bareRepo resolves remote to the bare repository it must be.
func bareRepo(ctx context.Context, work *gitx.Repo, top, remote string) (string, error) {
	fail := func(why string) error {
		return fmt.Errorf("forge: local needs %[1]s to be a bare repository on this machine, but %[3]s; "+
			"make one with: git init --bare /path/to/%[2]s.git && git remote add %[1]s /path/to/%[2]s.git "+
			"(git remote set-url %[1]s ... if it exists) && git push %[1]s <default branch>",
			remote, filepath.Base(top), why)
	}
	u, err := work.RemoteURL(ctx, remote)
	if err != nil {
		if errors.Is(err, gitx.ErrNoRemote) {
			return "", fail(fmt.Sprintf("%s has no remote %q", top, remote))
		}
		return "", fmt.Errorf("forge: local: %w", err)
	}
	path, ok := localPath(u)
	if !ok {
		return "", fail(fmt.Sprintf("it is %q, not a path on this machine", u))
	}
	if !filepath.IsAbs(path) {
		// git resolves a relative remote against the work tree's top.
		path = filepath.Join(top, path)
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return "", fail(fmt.Sprintf("it is %q, which does not exist", u))
	}
	r := &gitx.Repo{Dir: path, Timeout: work.Timeout}
	out, err := r.Run(ctx, "rev-parse", "--is-bare-repository", "--absolute-git-dir")
	bare, gitDir, _ := strings.Cut(out, "\n")
	if err != nil || bare != "true" || !samePath(gitDir, path) {
		return "", fail(fmt.Sprintf("it is %q, which is not a bare repository", u))
	}
	return gitDir, nil
}

// localPath is the path on this machine that the remote URL u names: a
// plain path or a file:// URL without another host. ok is false for
// anything git would reach over the network.
func localPath(u string) (path string, ok bool) {
	switch {
	case strings.HasPrefix(u, "file://"):
		pu, err := url.Parse(u)
		if err != nil || (pu.Host != "" && pu.Host != "localhost") {
			return "", false
		}
		return pu.Path, true
	case strings.Contains(u, "://") || isSCPLike(u):
		return "", false
	}
	return u, true
}

// isSCPLike reports git's host:path form, which git reads as ssh when the
// colon comes before any slash.
func isSCPLike(u string) bool {
	i := strings.Index(u, ":")
	return i > 0 && !strings.Contains(u[:i], "/")
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// BareDir is the bare repository the forge serves.
func (f *Forge) BareDir() string { return f.bareDir }

// DefaultBranch is the base new PRs get when they name none.
func (f *Forge) DefaultBranch() string { return f.opts.DefaultBranch }

// lock takes the named lock under forge/locks; what says, in an error,
// what the lock guards.
func (f *Forge) lock(ctx context.Context, name, what string) (func(), error) {
	return atomicfile.Lock(ctx, filepath.Join(f.dir, "locks", name+".lock"), f.opts.LockTimeout, what)
}

func now() time.Time { return time.Now().UTC() }

// person is by, or when empty the person running agenttree: $USER, else
// "human".
func person(by string) string { return cmp.Or(by, os.Getenv("USER"), "human") }
