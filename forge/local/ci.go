package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/gitx"
)

// ciCheckName is the one check the local forge reports per commit.
const ciCheckName = "ci"

// logKeep bounds the CI output kept per commit: its end, where failures are.
const logKeep = 256 << 10

// ciRecord is forge/checks/SHA.yaml.
type ciRecord struct {
	SHA string `yaml:"sha"`
	// Attempt counts runs for this commit, reruns included; it is the
	// check's ID.
	Attempt int `yaml:"attempt"`
	// State is empty once Rerun forgot the result.
	State       forge.CheckState `yaml:"state,omitempty"`
	Command     string           `yaml:"command"`
	ExitCode    int              `yaml:"exit_code,omitempty"`
	PID         int              `yaml:"pid,omitempty"`
	Host        string           `yaml:"host,omitempty"`
	StartedAt   time.Time        `yaml:"started_at,omitempty"`
	CompletedAt time.Time        `yaml:"completed_at,omitempty"`
}

func (f *Forge) ciPath(sha, ext string) string {
	return filepath.Join(f.dir, "checks", sha+ext)
}

func (f *Forge) ciLock(sha string) *flock.Flock {
	return flock.New(filepath.Join(f.dir, "locks", "ci-"+sha+".lock"))
}

func (f *Forge) readCI(sha string) (*ciRecord, error) {
	data, err := os.ReadFile(f.ciPath(sha, ".yaml"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec ciRecord
	if err := yaml.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", f.ciPath(sha, ".yaml"), err)
	}
	return &rec, nil
}

func (f *Forge) writeCI(rec *ciRecord) error {
	data, err := yaml.Marshal(rec)
	if err != nil {
		return err
	}
	return atomicfile.Write(f.ciPath(rec.SHA, ".yaml"), data, 0o644)
}

func (f *Forge) check(rec *ciRecord) forge.Check {
	return forge.Check{
		ID: int64(rec.Attempt), Name: ciCheckName, SHA: rec.SHA, State: rec.State,
		URL: f.ciPath(rec.SHA, ".log"), Kind: "local",
		StartedAt: rec.StartedAt, CompletedAt: rec.CompletedAt,
	}
}

// recordedChecks is what is known about sha's CI without running it: nil
// when nothing is recorded, empty when no CI is configured.
func (f *Forge) recordedChecks(sha string) ([]forge.Check, error) {
	if f.opts.CICommand == "" {
		return []forge.Check{}, nil
	}
	rec, err := f.readCI(sha)
	if err != nil || rec == nil || rec.State == "" {
		return nil, err
	}
	return []forge.Check{f.check(rec)}, nil
}

// Checks returns the CI check of commit sha, running CI first if the
// commit has no result yet.
//
// The first caller for a commit claims it with a per-commit lock, records
// the check as pending, runs the CI command synchronously in a temporary
// work tree of the bare repository detached at sha, and records the result;
// callers meanwhile get the pending check at once. The lock dies with its
// holder, so a pending record whose lock is free belongs to a run that
// crashed, and the next call runs CI again. If ctx ends during a run the
// result is forgotten (not recorded as a failure) and ctx's error returned.
//
// With no CI command configured there is nothing to wait for: no checks.
func (f *Forge) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	if f.opts.CICommand == "" {
		return nil, nil
	}
	full, err := f.resolve(ctx, sha)
	if err != nil {
		return nil, err
	}
	if rec, err := f.readCI(full); err != nil {
		return nil, err
	} else if rec != nil && rec.State.Done() && rec.State != "" {
		return []forge.Check{f.check(rec)}, nil
	}

	lk := f.ciLock(full)
	ok, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("local CI for %s: lock: %w", short(full), err)
	}
	if !ok {
		// Another caller is running it.
		rec, err := f.readCI(full)
		if err != nil {
			return nil, err
		}
		if rec == nil || rec.State == "" {
			rec = &ciRecord{SHA: full, State: forge.CheckPending}
		}
		return []forge.Check{f.check(rec)}, nil
	}
	defer lk.Unlock()

	rec, err := f.readCI(full)
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.State.Done() && rec.State != "" {
		return []forge.Check{f.check(rec)}, nil
	}
	if rec == nil {
		rec = &ciRecord{SHA: full}
	}
	host, _ := os.Hostname()
	*rec = ciRecord{
		SHA: full, Attempt: rec.Attempt + 1, State: forge.CheckPending,
		Command: f.opts.CICommand, PID: os.Getpid(), Host: host, StartedAt: now(),
	}
	if err := f.writeCI(rec); err != nil {
		return nil, fmt.Errorf("local CI for %s: %w", short(full), err)
	}

	state, code, log, runErr := f.runCI(ctx, full)
	if runErr != nil {
		// Not a CI verdict: leave no result, so the next call runs again.
		rec.State, rec.PID = "", 0
		if err := f.writeCI(rec); err != nil {
			return nil, errors.Join(runErr, err)
		}
		return nil, runErr
	}
	if err := atomicfile.Write(f.ciPath(full, ".log"), log, 0o644); err != nil {
		return nil, fmt.Errorf("local CI for %s: %w", short(full), err)
	}
	rec.State, rec.ExitCode, rec.PID, rec.CompletedAt = state, code, 0, now()
	if err := f.writeCI(rec); err != nil {
		return nil, fmt.Errorf("local CI for %s: %w", short(full), err)
	}
	return []forge.Check{f.check(rec)}, nil
}

// resolve turns a commit name into the full sha the records are keyed by.
func (f *Forge) resolve(ctx context.Context, sha string) (string, error) {
	full, err := f.bare.RevParse(ctx, sha)
	if errors.Is(err, gitx.ErrNoRef) {
		return "", fmt.Errorf("commit %s is not in %s (%w); push it first", sha, f.bareDir, forge.ErrNotFound)
	}
	return full, err
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// runCI runs the CI command on sha and returns its verdict and output. An
// error means there is no verdict: the checkout failed or ctx ended.
func (f *Forge) runCI(ctx context.Context, sha string) (forge.CheckState, int, []byte, error) {
	tmp, err := os.MkdirTemp("", "agenttree-ci-")
	if err != nil {
		return "", 0, nil, fmt.Errorf("local CI for %s: %w", short(sha), err)
	}
	defer os.RemoveAll(tmp)
	wt := filepath.Join(tmp, "src")
	if err := f.bare.WorktreeAdd(ctx, wt, sha); err != nil {
		return "", 0, nil, fmt.Errorf("local CI for %s: check out: %w", short(sha), err)
	}
	defer func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = f.bare.WorktreeRemove(cleanup, wt)
	}()

	rctx, cancel := context.WithTimeout(ctx, f.opts.CITimeout)
	defer cancel()
	out := &tailBuffer{max: logKeep}
	fmt.Fprintf(out, "$ %s\n", f.opts.CICommand)
	cmd := exec.CommandContext(rctx, "sh", "-c", f.opts.CICommand)
	cmd.Dir = wt
	cmd.Env = append(gitx.Environ(), "CI=true", "AGENTTREE_CI=1", "AGENTTREE_CI_SHA="+sha)
	cmd.Stdout, cmd.Stderr = out, out
	killGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start).Round(time.Millisecond)

	if ctx.Err() != nil {
		return "", 0, nil, fmt.Errorf("local CI for %s: stopped: %w", short(sha), ctx.Err())
	}
	var exit *exec.ExitError
	switch {
	case rctx.Err() != nil:
		fmt.Fprintf(out, "\nagenttree: CI timed out after %s and was killed\n", f.opts.CITimeout)
		return forge.CheckTimedOut, -1, out.Bytes(), nil
	case err == nil:
		fmt.Fprintf(out, "\nagenttree: CI passed in %s\n", took)
		return forge.CheckSuccess, 0, out.Bytes(), nil
	case errors.As(err, &exit):
		fmt.Fprintf(out, "\nagenttree: CI failed (%s) in %s\n", exit, took)
		return forge.CheckFailure, exit.ExitCode(), out.Bytes(), nil
	default:
		// sh missing or not runnable: the command cannot pass as configured.
		fmt.Fprintf(out, "\nagenttree: CI could not run: %v\n", err)
		return forge.CheckFailure, -1, out.Bytes(), nil
	}
}

// Rerun forgets the results of the given commits' CI, so that the next
// Checks runs it again. A run in progress is left alone: its result will
// be fresh.
func (f *Forge) Rerun(ctx context.Context, checks []forge.Check) error {
	seen := map[string]bool{}
	for _, c := range checks {
		if c.SHA == "" || seen[c.SHA] {
			continue
		}
		seen[c.SHA] = true
		full, err := f.resolve(ctx, c.SHA)
		if err != nil {
			return err
		}
		if err := f.forget(full); err != nil {
			return err
		}
	}
	return nil
}

func (f *Forge) forget(sha string) error {
	lk := f.ciLock(sha)
	ok, err := lk.TryLock()
	if err != nil {
		return fmt.Errorf("local CI for %s: lock: %w", short(sha), err)
	}
	if !ok {
		return nil
	}
	defer lk.Unlock()
	rec, err := f.readCI(sha)
	if err != nil || rec == nil {
		return err
	}
	rec.State, rec.ExitCode, rec.PID, rec.CompletedAt = "", 0, 0, time.Time{}
	if err := f.writeCI(rec); err != nil {
		return err
	}
	if err := os.Remove(f.ciPath(sha, ".log")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Log returns the last lines lines (all that is kept when lines <= 0) of
// the CI output for c's commit, or "" when there is none.
func (f *Forge) Log(ctx context.Context, c forge.Check, lines int) (string, error) {
	if c.SHA == "" || strings.ContainsAny(c.SHA, `/\.`) {
		return "", nil
	}
	data, err := os.ReadFile(f.ciPath(c.SHA, ".log"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return lastLines(string(data), lines), nil
}

func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if n <= 0 {
		return s
	}
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(s[:i], '\n')
		if i < 0 {
			return s
		}
	}
	return s[i+1:]
}

// tailBuffer keeps the last max bytes written to it (roughly: it trims in
// chunks), starting at a line boundary once trimmed.
type tailBuffer struct {
	max     int
	buf     bytes.Buffer
	trimmed bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if t.buf.Len() > 2*t.max {
		keep := t.buf.Bytes()[t.buf.Len()-t.max:]
		if i := bytes.IndexByte(keep, '\n'); i >= 0 {
			keep = keep[i+1:]
		}
		var nb bytes.Buffer
		nb.Write(keep)
		t.buf = nb
		t.trimmed = true
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	if t.trimmed {
		return append([]byte("[... earlier output dropped ...]\n"), t.buf.Bytes()...)
	}
	return t.buf.Bytes()
}
