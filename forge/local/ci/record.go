package ci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local/records"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/gitx"
)

// record is SHA.yaml, the CI state of one commit.
type record struct {
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
	Note string `yaml:"note,omitempty"`
	// Environment says why a failed run failed for its environment, not
	// the command's code (forge.Check.Environment).
	Environment string `yaml:"environment,omitempty"`
	// Queued: the attempt waits for a run slot (Options.MaxParallel); it
	// has no runner yet, and QueuedAt says since when.
	Queued      bool      `yaml:"queued,omitempty"`
	QueuedAt    time.Time `yaml:"queued_at,omitempty"`
	StartedAt   time.Time `yaml:"started_at,omitempty"`
	CompletedAt time.Time `yaml:"completed_at,omitempty"`
}

// recordPath is the CI record of commit sha.
func (r *Runs) recordPath(sha string) string {
	return filepath.Join(r.opts.Dir, sha+".yaml")
}

// runPath names a file of one attempt: SHA.N.log, SHA.N.result.
func (r *Runs) runPath(sha string, attempt int, ext string) string {
	return filepath.Join(r.opts.Dir, sha+"."+strconv.Itoa(attempt)+ext)
}

func (r *Runs) lock(ctx context.Context, sha string) (func(), error) {
	path := filepath.Join(r.opts.LockDir, "ci-"+sha+".lock")
	return atomicfile.Lock(ctx, path, r.opts.LockTimeout, "local CI of "+gitx.ShortSHA(sha))
}

// records are the CI records, each logged in a hash chain beside it
// (SHA.chain.jsonl), so a result written by hand (state: success) is not
// taken for one the CI run gave. Records from before logs got theirs
// when their state directory was migrated (statedir.Layout.Migrate).
func (r *Runs) records() records.Kind { return Records(r.opts.Dir) }

// Records are the CI records in dir.
func Records(dir string) records.Kind {
	return records.Kind{Records: chain.Records{Dir: dir},
		Name:     func(file string) string { return "local CI of " + gitx.ShortSHA(strings.TrimSuffix(file, ".yaml")) },
		Unlogged: "with its log gone nothing holds what the CI run gave, so a person removes the record to run CI again",
		Changed: "a person puts back the version agenttree last wrote (the content of the last line of %s), " +
			"or removes both to run CI again",
	}
}

// read reads sha's CI record, nil when there is none. One changed
// outside agenttree is a *forge.TamperedError.
func (r *Runs) read(sha string) (*record, error) {
	data, err := r.records().Read(sha + ".yaml")
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var rec record
	if err := yaml.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", r.recordPath(sha), err)
	}
	return &rec, nil
}

func (r *Runs) write(rec *record) error {
	data, err := yaml.Marshal(rec)
	if err == nil {
		err = r.records().Write(rec.SHA+".yaml", data)
	}
	if err != nil {
		return fmt.Errorf("local CI of %s: %w", gitx.ShortSHA(rec.SHA), err)
	}
	return nil
}

// sweep removes the files of sha's attempts before attempt: logs of
// forgotten results, and results of runners that finished after their
// attempt was superseded.
func (r *Runs) sweep(sha string, attempt int) {
	names, _ := filepath.Glob(filepath.Join(r.opts.Dir, sha+".*"))
	for _, name := range names {
		rest := strings.TrimPrefix(filepath.Base(name), sha+".")
		n, _, _ := strings.Cut(rest, ".")
		if k, err := strconv.Atoi(n); err == nil && k < attempt {
			_ = os.Remove(name)
		}
	}
}
