// Package gittest is the git plumbing tests share: a fixed identity with
// the user's and system's git configuration kept out, running git in a
// directory, committing a file, and a bare origin with a clone of it.
//
// Run, Commit and NewRemote always pass the isolated environment on the
// command itself, so they are safe in parallel tests. Isolate,
// IsolateProcess and Env are for code under test that runs git with the
// process environment.
package gittest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gitx"
)

// The identity of every commit made through this package (author and
// committer).
const (
	Name  = "Test"
	Email = "test@example.com"
)

// Env is the isolated git environment as KEY=VALUE pairs: the fixed
// identity, no global or system configuration. Append it to a command's
// Env, or set it in TestMain for the code under test.
func Env() []string {
	return []string{
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=" + Name,
		"GIT_AUTHOR_EMAIL=" + Email,
		"GIT_COMMITTER_NAME=" + Name,
		"GIT_COMMITTER_EMAIL=" + Email,
	}
}

// Require skips the test where git is not installed.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// Isolate sets Env in the process environment for the rest of the test,
// for the git the code under test runs. Like t.Setenv, it cannot be used
// in parallel tests or tests with parallel ancestors: use IsolateProcess
// in TestMain for those.
func Isolate(t testing.TB) {
	t.Helper()
	for _, kv := range Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// IsolateProcess sets Env in the process environment for good. Call it from
// TestMain, before m.Run, when the code under test runs git in parallel
// tests.
func IsolateProcess() {
	for _, kv := range Env() {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			panic(err)
		}
	}
}

// Run runs git with args in dir, with Env, through gitx (so with its
// timeout, no terminal prompt and no repository variables inherited from
// the environment), and returns its standard output without surrounding
// white space. The test fails at once if git does, with what git said.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	// Not t.Context(): it is cancelled before Cleanup functions run, where
	// a test may still call Run. gitx's timeout bounds the command.
	out, err := (&gitx.Repo{Dir: dir, Env: Env()}).Run(context.Background(), args...)
	require.NoError(t, err, "%s", out)
	return strings.TrimSpace(out)
}

// Commit writes content to file (relative to the work tree dir), commits
// it with msg and returns the new commit's SHA.
func Commit(t testing.TB, dir, file, content, msg string) string {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644))
	Run(t, dir, "add", file)
	Run(t, dir, "commit", "-q", "-m", msg)
	return Run(t, dir, "rev-parse", "HEAD")
}

// NewRemote makes a bare repository origin.git and a clone of it, work,
// side by side in a new temporary directory. The clone is on main, whose
// one commit, "init", adds a.txt with the lines one, two and three; origin
// has main too.
func NewRemote(t testing.TB) (bare, clone string) {
	t.Helper()
	root := t.TempDir()
	bare, clone = filepath.Join(root, "origin.git"), filepath.Join(root, "work")
	Run(t, root, "init", "-q", "--bare", "--initial-branch=main", bare)
	Run(t, root, "clone", "-q", bare, clone)
	Run(t, clone, "checkout", "-q", "-B", "main")
	Commit(t, clone, "a.txt", "one\ntwo\nthree\n", "init")
	Run(t, clone, "push", "-q", "origin", "main")
	return bare, clone
}
