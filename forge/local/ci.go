package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/gitx"
)

// ciCheckName is the one check the local forge reports per commit.
const ciCheckName = "ci"

// noCINote is what the check of a forge without a CI command says, so that
// a person wondering why nothing ran finds the reason where the log would be.
const noCINote = "no ci.command configured"

// logKeep bounds the CI output kept per commit: its end, where failures are.
const logKeep = 256 << 10

// ciGrace is how long a timed-out CI command has between TERM and KILL to
// stop its test servers and write its last words.
const ciGrace = 10 * time.Second

// ciMargin is how long past CITimeout a run may stay without a result
// before it counts as lost even though its process seems alive: by then
// the runner's own time limit, the grace and the work tree clean-up are
// long over, so the pid has been reused or the runner is stuck.
const ciMargin = 5 * time.Minute

// maxCIRestarts is how many times a runner that vanished without a result
// is started again before the run is recorded as failed. One restart
// covers the usual cause, a reboot or a killed session; a runner that
// keeps vanishing is a problem for a person, not a loop.
const maxCIRestarts = 1

// ciRecord is forge/checks/SHA.yaml.
type ciRecord struct {
	SHA string `yaml:"sha"`
	// Attempt counts runs for this commit, restarts and reruns included; it
	// is the check's ID and names the run's files, so a runner left over
	// from an earlier attempt cannot write over a newer one.
	Attempt int `yaml:"attempt"`
	// State is empty once Rerun forgot the result.
	State    forge.CheckState `yaml:"state,omitempty"`
	Command  string           `yaml:"command"`
	ExitCode int              `yaml:"exit_code,omitempty"`
	// PID and Host identify the detached runner while it runs; PID 0 on a
	// pending record means the runner never started.
	PID  int    `yaml:"pid,omitempty"`
	Host string `yaml:"host,omitempty"`
	// Worktree is the runner's temporary checkout, removed by the runner or,
	// if it died, by whoever notices.
	Worktree string `yaml:"worktree,omitempty"`
	// Restarts counts runners that vanished without a result for this
	// commit since the last rerun.
	Restarts int `yaml:"restarts,omitempty"`
	// Note says why a result is not the command's own verdict.
	Note        string    `yaml:"note,omitempty"`
	StartedAt   time.Time `yaml:"started_at,omitempty"`
	CompletedAt time.Time `yaml:"completed_at,omitempty"`
}

func (f *Forge) ciPath(sha, ext string) string {
	return filepath.Join(f.dir, "checks", sha+ext)
}

// runPath names a file of one attempt: SHA.N.log, SHA.N.result.
func (f *Forge) runPath(sha string, attempt int, ext string) string {
	return filepath.Join(f.dir, "checks", sha+"."+strconv.Itoa(attempt)+ext)
}

func (f *Forge) lockCI(ctx context.Context, sha string) (func(), error) {
	return f.lock(ctx, "ci-"+sha, "local CI of "+short(sha))
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
	if err := atomicfile.Write(f.ciPath(rec.SHA, ".yaml"), data, 0o644); err != nil {
		return fmt.Errorf("local CI of %s: %w", short(rec.SHA), err)
	}
	return nil
}

func (f *Forge) check(rec *ciRecord) forge.Check {
	return forge.Check{
		ID: int64(rec.Attempt), Name: ciCheckName, SHA: rec.SHA, State: rec.State,
		URL: f.runPath(rec.SHA, rec.Attempt, ".log"), Kind: "local",
		StartedAt: rec.StartedAt, CompletedAt: rec.CompletedAt,
	}
}

// noCICheck stands for CI on a forge without a CI command: a passing
// check rather than none, because "no checks" reads as "CI has not
// started yet" and would have wait_for_ci wait for a run that never comes.
func noCICheck(sha string) forge.Check {
	return forge.Check{Name: ciCheckName, SHA: sha, State: forge.CheckSkipped, Kind: "local", URL: noCINote}
}

// recordedChecks is what is known about sha's CI without starting a run:
// nil when nothing is recorded. A result the runner has left since the
// last look is taken in, which is cheap and spares a PR view from showing
// a finished run as pending.
func (f *Forge) recordedChecks(ctx context.Context, sha string) ([]forge.Check, error) {
	if f.opts.CICommand == "" {
		return []forge.Check{noCICheck(sha)}, nil
	}
	rec, err := f.readCI(sha)
	if err != nil || rec == nil || rec.State == "" {
		return nil, err
	}
	if rec.State == forge.CheckPending && exists(f.runPath(sha, rec.Attempt, ".result")) {
		unlock, err := f.lockCI(ctx, sha)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if rec, err = f.readCI(sha); err != nil || rec == nil || rec.State == "" {
			return nil, err
		}
		if rec.State == forge.CheckPending {
			if rec, err = f.settle(ctx, rec, false); err != nil {
				return nil, err
			}
		}
	}
	return []forge.Check{f.check(rec)}, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Checks returns the CI check of commit sha, starting CI if the commit has
// no result yet. It never waits for CI: agenttree runs as short-lived
// commands, and a poll must stay quick however long CI takes.
//
// The first caller for a commit, under the commit's lock, checks it out in
// a temporary work tree of the bare repository and starts a detached
// runner (its own session, so it outlives the caller and is not hit by the
// caller's Ctrl-C). The runner runs the CI command under CITimeout, writes
// its output to the attempt's log and its exit status to the attempt's
// result file, removes its work tree, and exits. Until then every caller
// gets the check as pending; the first one after the result appears turns
// it into the final record. A runner that vanished without a result (its
// process gone, or no result long after CITimeout) is started once more
// and then recorded as failed, with the reason in the log.
//
// ctx bounds only the work done in this call (the checkout); a cancelled
// call records nothing. With no CI command configured the commit has one
// skipped check, "ci", which passes.
func (f *Forge) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	full, err := f.resolve(ctx, sha)
	if err != nil {
		return nil, err
	}
	if f.opts.CICommand == "" {
		return []forge.Check{noCICheck(full)}, nil
	}
	if rec, err := f.readCI(full); err != nil {
		return nil, err
	} else if rec != nil && rec.State.Done() {
		return []forge.Check{f.check(rec)}, nil
	}

	unlock, err := f.lockCI(ctx, full)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := f.readCI(full)
	if err != nil {
		return nil, err
	}
	switch {
	case rec == nil || rec.State == "":
		attempt := 1
		if rec != nil {
			attempt = rec.Attempt + 1
		}
		rec, err = f.startCI(ctx, full, attempt, 0, "")
	case rec.State == forge.CheckPending:
		rec, err = f.settle(ctx, rec, true)
	}
	if err != nil {
		return nil, err
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

// startCI records attempt as pending and starts its runner. The record is
// written before anything runs, so a crash at any point leaves a record
// whose runner is known (pid 0: never started) and whose work tree is
// known. The caller holds the commit's lock.
func (f *Forge) startCI(ctx context.Context, sha string, attempt, restarts int, note string) (*ciRecord, error) {
	f.sweep(sha, attempt)
	host, _ := os.Hostname()
	tmp, err := os.MkdirTemp("", "agenttree-ci-")
	if err != nil {
		return nil, fmt.Errorf("local CI of %s: %w", short(sha), err)
	}
	rec := &ciRecord{SHA: sha, Attempt: attempt, State: forge.CheckPending, Command: f.opts.CICommand,
		Host: host, Worktree: filepath.Join(tmp, "src"), Restarts: restarts, StartedAt: now()}
	// abandon leaves no verdict: the next Checks starts a new attempt.
	abandon := func(cause error) (*ciRecord, error) {
		f.removeWorktree(ctx, rec.Worktree)
		rec.State, rec.Worktree = "", ""
		return nil, errors.Join(cause, f.writeCI(rec))
	}
	if err := f.writeCI(rec); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	if err := f.bare.WorktreeAdd(ctx, rec.Worktree, sha); err != nil {
		return abandon(fmt.Errorf("local CI of %s: check out: %w", short(sha), err))
	}
	header := "$ " + f.opts.CICommand + "\n"
	if note != "" {
		header = note + "\n" + header
	}
	if err := atomicfile.Write(f.runPath(sha, attempt, ".log"), []byte(header), 0o644); err != nil {
		return abandon(fmt.Errorf("local CI of %s: %w", short(sha), err))
	}
	pid, err := f.spawnRunner(rec)
	if err != nil {
		return abandon(fmt.Errorf("local CI of %s: start: %w", short(sha), err))
	}
	rec.PID = pid
	if err := f.writeCI(rec); err != nil {
		// The runner runs on, but the record still says pid 0: the next
		// call takes it for one that never started and runs a new attempt,
		// and this one's result, filed under its own attempt, is ignored.
		return nil, err
	}
	return rec, nil
}

// runnerScript is the detached CI runner, run by `sh -c` with its
// parameters as arguments so that nothing is quoted into it. It removes
// its work tree before it publishes the result (rename of result.tmp), so
// a final record means the run has left nothing behind; result.tmp keeps
// the time CI ended as its modification time, which becomes CompletedAt.
//
// With coreutils timeout the whole process group of the CI command is
// signalled at the limit; timeout exits 124, or 137 if it had to KILL.
// Without it (macOS has none) a watchdog sends TERM to the runner's
// process group, which is its own session (own_group=1): the CI command
// and everything it started get it, and the runner and the watchdog,
// which trap it, carry on; a CI shell that survives the grace gets KILL.
const runnerScript = `
bare=$1 wt=$2 tmp=$3 log=$4 result=$5 limit=$6 limit_s=$7 grace_s=$8 own_group=$9
shift 9
timeout_bin=$1 cmd=$2
to=0
if cd "$wt" 2>>"$log"; then
	start=$(date +%s)
	if [ -n "$timeout_bin" ]; then
		"$timeout_bin" -k "$grace_s" "$limit" sh -c "$cmd" </dev/null >>"$log" 2>&1
		st=$?
		if [ "$st" -eq 124 ] || { [ "$st" -eq 137 ] && [ $(( $(date +%s) - start )) -ge "$limit_s" ]; }; then
			to=1
		fi
	else
		sh -c "$cmd" </dev/null >>"$log" 2>&1 &
		child=$!
		trap ': ' TERM
		(
			trap ': ' TERM
			n=$limit_s
			while kill -0 "$child" 2>/dev/null; do
				if [ "$n" -le 0 ]; then
					: >"$result.timedout"
					if [ "$own_group" = 1 ]; then kill -TERM 0; else kill -TERM "$child"; fi
					g=$grace_s
					while [ "$g" -gt 0 ] && kill -0 "$child" 2>/dev/null; do sleep 1; g=$((g - 1)); done
					kill -KILL "$child"
					exit 0
				fi
				sleep 1
				n=$((n - 1))
			done
		) >/dev/null 2>&1 &
		# The TERM for the group interrupts wait; wait again until the
		# CI shell is reaped.
		while :; do
			wait "$child"
			st=$?
			kill -0 "$child" 2>/dev/null || break
		done
		trap - TERM
		if [ -e "$result.timedout" ]; then to=1; fi
		rm -f "$result.timedout"
	fi
else
	st=126
fi
printf '%s %s\n' "$st" "$to" >"$result.tmp"
cd /
git --git-dir="$bare" worktree remove --force "$wt" >/dev/null 2>&1
rm -rf "$tmp"
git --git-dir="$bare" worktree prune >/dev/null 2>&1
mv -f "$result.tmp" "$result"
`

// seconds formats d for timeout(1), which takes fractions.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// wholeSeconds rounds d up, for the shell's integer arithmetic.
func wholeSeconds(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}

// spawnRunner starts rec's runner detached and returns its pid.
func (f *Forge) spawnRunner(rec *ciRecord) (int, error) {
	cmd := exec.Command("sh", "-c", runnerScript, "agenttree-ci",
		f.bareDir, rec.Worktree, filepath.Dir(rec.Worktree),
		f.runPath(rec.SHA, rec.Attempt, ".log"), f.runPath(rec.SHA, rec.Attempt, ".result"),
		seconds(f.opts.CITimeout), wholeSeconds(f.opts.CITimeout), wholeSeconds(ciGrace), ownGroup,
		f.timeoutBin, f.opts.CICommand)
	cmd.Dir = rec.Worktree
	cmd.Env = append(gitx.Environ(), "CI=true", "AGENTTREE_CI=1", "AGENTTREE_CI_SHA="+rec.SHA)
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	// Reaped in the background: in a long-lived caller (the controller) a
	// finished runner would otherwise stay a zombie, which the liveness
	// check takes for alive. A short-lived caller exits first and leaves
	// the runner to init.
	go func() { _ = cmd.Wait() }()
	return cmd.Process.Pid, nil
}

// runResult is what a runner leaves: "STATUS TIMEDOUT".
type runResult struct {
	exit     int
	timedOut bool
	at       time.Time
}

func readResult(path string) (runResult, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return runResult{}, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return runResult{}, false
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return runResult{}, false
	}
	code, err1 := strconv.Atoi(fields[0])
	to, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return runResult{}, false
	}
	return runResult{exit: code, timedOut: to == 1, at: st.ModTime().UTC()}, true
}

// settle looks at a pending run: it records the result if the runner left
// one, and otherwise, if the runner is gone and mayRestart, starts it
// again or records the failure. The caller holds the commit's lock.
func (f *Forge) settle(ctx context.Context, rec *ciRecord, mayRestart bool) (*ciRecord, error) {
	// Liveness first: a runner publishes its result before it exits, so a
	// runner seen dead here has left any result it ever will.
	alive, why := f.runnerAlive(rec)
	if res, ok := readResult(f.runPath(rec.SHA, rec.Attempt, ".result")); ok {
		return f.finish(rec, res, "")
	}
	if alive || !mayRestart {
		return rec, nil
	}
	f.removeWorktree(ctx, rec.Worktree)
	// A runner that died after CI but before publishing left the verdict.
	if res, ok := readResult(f.runPath(rec.SHA, rec.Attempt, ".result.tmp")); ok {
		return f.finish(rec, res, "")
	}
	lost := fmt.Sprintf("agenttree: the CI runner of attempt %d (pid %d) stopped without a result: %s", rec.Attempt, rec.PID, why)
	if rec.Restarts < maxCIRestarts {
		return f.startCI(ctx, rec.SHA, rec.Attempt+1, rec.Restarts+1, lost+"; running CI again")
	}
	return f.finish(rec, runResult{exit: -1, at: now()},
		lost+"; recorded as a failure (this is not the CI command's verdict). Rerun the check to run CI again.")
}

// runnerAlive reports whether rec's runner may still be running, and if
// not, why not.
func (f *Forge) runnerAlive(rec *ciRecord) (bool, string) {
	host, _ := os.Hostname()
	limit := f.opts.CITimeout + ciMargin
	switch {
	case rec.PID == 0:
		return false, "it never started"
	case time.Since(rec.StartedAt) > limit:
		return false, fmt.Sprintf("no result %s after it started (CI time limit %s)",
			time.Since(rec.StartedAt).Round(time.Second), f.opts.CITimeout)
	case rec.Host != "" && rec.Host != host:
		// Another machine's pid says nothing here; only the age can tell.
		return true, ""
	case !processAlive(rec.PID):
		return false, "its process is gone"
	}
	return true, ""
}

// finish records rec's result. A lost note makes it a failure that is not
// the command's verdict, and says why in the log and the record.
func (f *Forge) finish(rec *ciRecord, res runResult, lost string) (*ciRecord, error) {
	took := res.at.Sub(rec.StartedAt).Round(time.Millisecond)
	state, note := forge.CheckFailure, lost
	switch {
	case lost != "":
		rec.Note = lost
	case res.timedOut:
		state = forge.CheckTimedOut
		note = fmt.Sprintf("agenttree: CI timed out after %s and was killed", f.opts.CITimeout)
	case res.exit == 0:
		state = forge.CheckSuccess
		note = fmt.Sprintf("agenttree: CI passed in %s", took)
	default:
		note = fmt.Sprintf("agenttree: CI failed (exit status %d) in %s", res.exit, took)
	}
	if err := f.finishLog(rec.SHA, rec.Attempt, note); err != nil {
		return nil, err
	}
	rec.State, rec.ExitCode, rec.CompletedAt, rec.PID, rec.Worktree = state, res.exit, res.at, 0, ""
	if err := f.writeCI(rec); err != nil {
		return nil, err
	}
	for _, ext := range []string{".result", ".result.tmp", ".result.timedout"} {
		_ = os.Remove(f.runPath(rec.SHA, rec.Attempt, ext))
	}
	return rec, nil
}

// finishLog keeps the end of the attempt's log and appends the verdict.
func (f *Forge) finishLog(sha string, attempt int, verdict string) error {
	path := f.runPath(sha, attempt, ".log")
	out, err := tailFile(path, logKeep)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("local CI of %s: %w", short(sha), err)
	}
	if len(out) > 0 {
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		out = append(out, '\n')
	}
	out = append(out, verdict+"\n"...)
	if err := atomicfile.Write(path, out, 0o644); err != nil {
		return fmt.Errorf("local CI of %s: %w", short(sha), err)
	}
	return nil
}

// tailFile reads the last max bytes of path, from a line start, marked as
// cut when it is.
func tailFile(path string, max int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() <= max {
		return io.ReadAll(fh)
	}
	if _, err := fh.Seek(st.Size()-max, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[i+1:]
	}
	return append([]byte("[... earlier output dropped ...]\n"), data...), nil
}

// removeWorktree removes a dead runner's checkout. It touches only what
// startCI makes (a src directory in an agenttree-ci-* temporary
// directory), whatever a hand-edited record says.
func (f *Forge) removeWorktree(ctx context.Context, wt string) {
	tmp := filepath.Dir(wt)
	if wt == "" || filepath.Base(wt) != "src" || !strings.HasPrefix(filepath.Base(tmp), "agenttree-ci-") {
		return
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	_ = f.bare.WorktreeRemove(cleanup, wt)
	_ = os.RemoveAll(tmp)
	_, _ = f.bare.Run(cleanup, "worktree", "prune")
}

// sweep removes the files of sha's attempts before attempt: logs of
// forgotten results, and results of runners that finished after their
// attempt was superseded.
func (f *Forge) sweep(sha string, attempt int) {
	names, _ := filepath.Glob(filepath.Join(f.dir, "checks", sha+".*"))
	for _, name := range names {
		rest := strings.TrimPrefix(filepath.Base(name), sha+".")
		n, _, _ := strings.Cut(rest, ".")
		if k, err := strconv.Atoi(n); err == nil && k < attempt {
			_ = os.Remove(name)
		}
	}
}

// Rerun forgets the results of the given commits' CI, so that the next
// Checks runs it again as a new attempt. A runner still going is left to
// finish; its result belongs to its own attempt and is ignored.
func (f *Forge) Rerun(ctx context.Context, checks []forge.Check) error {
	if f.opts.CICommand == "" {
		return nil
	}
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
		if err := f.forget(ctx, full); err != nil {
			return err
		}
	}
	return nil
}

func (f *Forge) forget(ctx context.Context, sha string) error {
	unlock, err := f.lockCI(ctx, sha)
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := f.readCI(sha)
	if err != nil || rec == nil || rec.State == "" {
		return err
	}
	if rec.State.Done() {
		_ = os.Remove(f.runPath(sha, rec.Attempt, ".log"))
	}
	*rec = ciRecord{SHA: sha, Attempt: rec.Attempt, Command: rec.Command}
	return f.writeCI(rec)
}

// Log returns the last lines lines (all that is kept when lines <= 0) of
// the output of c's attempt (the latest when c has no ID), or "" when
// there is none.
func (f *Forge) Log(ctx context.Context, c forge.Check, lines int) (string, error) {
	if c.SHA == "" || strings.ContainsAny(c.SHA, `/\.`) {
		return "", nil
	}
	if f.opts.CICommand == "" {
		return "agenttree: " + noCINote + "; there is no CI to run", nil
	}
	attempt := int(c.ID)
	if attempt <= 0 {
		rec, err := f.readCI(c.SHA)
		if err != nil || rec == nil {
			return "", err
		}
		attempt = rec.Attempt
	}
	data, err := os.ReadFile(f.runPath(c.SHA, attempt, ".log"))
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
