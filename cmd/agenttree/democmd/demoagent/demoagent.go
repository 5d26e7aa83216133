// Package demoagent is the scripted coding agent `agenttree demo` runs as
// an ordinary agent `command`: it reads what is typed into its tmux pane,
// one message at a time, and does what a coding agent would with it —
// implement, fix a CI failure, resolve a merge conflict — then runs
// `agenttree next`, printing what it does. Its work is the demo's story,
// scripted; everything around it (the engine, the controller, the forge,
// tmux) is the real product.
package demoagent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/gitx"
)

// Work is what the agent writes, by kind of message. The demo's CI checks
// for FixFile, so the first push fails CI and the fix makes it pass; the
// implementation adds a line to Changelog, where a change landing on main
// meanwhile makes the conflict the agent resolves.
const (
	FeatureFile = "checkout.txt"
	FixFile     = "ok.txt"
	Changelog   = "CHANGES.md"
	// ChangelogLine is the line the implementation adds to Changelog.
	ChangelogLine = "- Add the checkout page\n"
)

// Agent acts in its worktree on the messages it reads.
type Agent struct {
	// Repo is the agent's worktree, on its issue's branch.
	Repo *gitx.Repo
	// Base is the branch its work goes to (main).
	Base string
	// Next runs `agenttree next` in the worktree and returns its output.
	Next func(ctx context.Context) (string, error)
	Out  io.Writer
	// Quiet is how long input must pause before a message counts as
	// whole (a message is pasted, then submitted, line by line).
	Quiet time.Duration
}

// Kind is what a message asks of the agent.
type Kind string

const (
	KindImplement Kind = "implement"
	KindCIFailed  Kind = "ci_failed"
	KindConflict  Kind = "conflict"
	KindOther     Kind = "other"
)

// Classify says what a message asks. The texts are the engine's own: a
// stage's instructions ("Work on implement.code ..."), the CI failure and
// merge conflict notices (engine/notice/skills).
func Classify(text string) Kind {
	switch {
	case strings.Contains(text, "conflicts with its base"), strings.Contains(text, "merge conflict"):
		return KindConflict
	case strings.Contains(text, "CI failed"):
		return KindCIFailed
	case asksToWorkOn(text, "implement"):
		return KindImplement
	}
	return KindOther
}

// asksToWorkOn reports whether text says "Work on STAGE" of stage or one
// of its substages (implement, implement.code), not of a longer name
// (implementation_review).
func asksToWorkOn(text, stage string) bool {
	for rest := text; ; {
		i := strings.Index(rest, "Work on "+stage)
		if i < 0 {
			return false
		}
		rest = rest[i+len("Work on "+stage):]
		if rest == "" || !(rest[0] == '_' || rest[0] >= 'a' && rest[0] <= 'z' || rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] >= '0' && rest[0] <= '9') {
			return true
		}
	}
}

// Run reads messages from in until it ends or ctx is done, acting on each.
func (a *Agent) Run(ctx context.Context, in io.Reader) error {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	fmt.Fprintln(a.Out, "demo agent: waiting for instructions")
	var msg []string
	quiet := a.Quiet
	if quiet <= 0 {
		quiet = 300 * time.Millisecond
	}
	for {
		var timeout <-chan time.Time
		if len(msg) > 0 {
			timeout = time.After(quiet)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			msg = append(msg, line)
		case <-timeout:
			a.act(ctx, strings.Join(msg, "\n"))
			msg = nil
		}
	}
}

// act does what one message asks, saying what it does.
func (a *Agent) act(ctx context.Context, text string) {
	var err error
	switch kind := Classify(text); kind {
	case KindImplement:
		err = a.implement(ctx)
	case KindCIFailed:
		err = a.fixCI(ctx)
	case KindConflict:
		err = a.resolve(ctx)
	default:
		fmt.Fprintln(a.Out, "demo agent: nothing for me to do in that message")
		return
	}
	if err != nil {
		fmt.Fprintln(a.Out, "demo agent: failed:", err)
		return
	}
	a.next(ctx)
}

func (a *Agent) implement(ctx context.Context) error {
	fmt.Fprintln(a.Out, "demo agent: implementing the checkout page")
	changes, err := os.ReadFile(filepath.Join(a.Repo.Dir, Changelog))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := a.write(Changelog, string(changes)+ChangelogLine); err != nil {
		return err
	}
	return a.commit(ctx, FeatureFile, "checkout page\n", "Add the checkout page")
}

func (a *Agent) fixCI(ctx context.Context) error {
	fmt.Fprintln(a.Out, "demo agent: CI failed; fixing it")
	return a.commit(ctx, FixFile, "ok\n", "Make CI pass")
}

// resolve rebases the branch onto its base and resolves each conflicting
// file by keeping both sides' lines.
func (a *Agent) resolve(ctx context.Context) error {
	fmt.Fprintln(a.Out, "demo agent: rebasing onto origin/"+a.Base+" and resolving the conflict")
	if err := a.Repo.Fetch(ctx, gitx.DefaultRemote); err != nil {
		return err
	}
	if _, err := a.Repo.Run(ctx, "rebase", "origin/"+a.Base); err == nil {
		return nil // it applied cleanly after all
	}
	for range 10 { // one round per commit that conflicts
		files, err := a.Repo.Run(ctx, "diff", "--name-only", "--diff-filter=U")
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(files) {
			if err := keepBoth(filepath.Join(a.Repo.Dir, f)); err != nil {
				return err
			}
			fmt.Fprintln(a.Out, "demo agent: resolved", f, "keeping both sides")
			if _, err := a.Repo.Run(ctx, "add", "--", f); err != nil {
				return err
			}
		}
		if _, err := a.Repo.Run(ctx, "-c", "core.editor=true", "rebase", "--continue"); err == nil {
			return nil
		}
	}
	_, _ = a.Repo.Run(ctx, "rebase", "--abort")
	return fmt.Errorf("the rebase onto origin/%s did not finish", a.Base)
}

// keepBoth rewrites a file with conflict markers to hold both sides.
func keepBoth(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "<<<<<<< "), strings.HasPrefix(l, "======="), strings.HasPrefix(l, ">>>>>>> "):
			continue
		}
		out = append(out, l)
	}
	return os.WriteFile(path, []byte(strings.Join(out, "")), 0o644)
}

// write writes file in the worktree and stages it.
func (a *Agent) write(file, content string) error {
	if err := os.WriteFile(filepath.Join(a.Repo.Dir, file), []byte(content), 0o644); err != nil {
		return err
	}
	_, err := a.Repo.Run(context.Background(), "add", "--", file)
	return err
}

// commit writes file and commits everything staged.
func (a *Agent) commit(ctx context.Context, file, content, message string) error {
	if err := a.write(file, content); err != nil {
		return err
	}
	_, err := a.Repo.Run(ctx, "commit", "-q", "-m", message)
	return err
}

func (a *Agent) next(ctx context.Context) {
	fmt.Fprintln(a.Out, "demo agent: agenttree next")
	out, err := a.Next(ctx)
	fmt.Fprint(a.Out, out)
	if err != nil {
		fmt.Fprintln(a.Out, "demo agent:", err)
	}
}
