package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttree/agenttree/controller/api/apitest"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge/local/localtest"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// binary is the agenttree executable TestMain builds for the tests that need
// real processes (concurrency, crashes).
var binary string

func TestMain(m *testing.M) {
	// The local forge runs CI by starting this binary as its runner.
	localtest.RunnerMain()
	// A flood of the controller's socket is this binary as another user.
	apitest.FloodMain()
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "agenttree-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "agenttree")
	build := exec.Command("go", "build", "-tags", buildTags, "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "go build:", err)
		return 1
	}
	return m.Run()
}

// processEnv is the environment of a child agenttree: the real one without
// any AGENTTREE_ variable, plus extra.
func processEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTTREE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// command prepares the built binary in w's directory, where it finds w's
// config as agents do.
func (w *workspace) command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Dir = w.dir
	cmd.Env = env
	return cmd
}

const reviewDone = "# Review\n\n## Critical Issues\n\nNone\n\n## Notes\n\n- looks fine\n"

// startTogether starts cmds as close to the same moment as it can and
// returns their output buffers; the caller waits for them. Each command
// runs behind a start barrier: a shell blocked reading a shared pipe, which
// execs the command once the pipe closes, after every process was started.
func startTogether(t *testing.T, cmds []*exec.Cmd) (stdouts, stderrs []*bytes.Buffer) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Log("no sh: the processes start in a tight loop without a barrier")
	}
	gate, release, err := os.Pipe()
	require.NoError(t, err)
	defer gate.Close()
	defer release.Close()
	for i, c := range cmds {
		if sh != "" {
			// sh -c SCRIPT PROGRAM ARGS...: $0 is the program.
			c.Args = append([]string{sh, "-c", `read _; exec "$0" "$@"`, c.Path}, c.Args[1:]...)
			c.Path = sh
			c.Stdin = gate
		}
		stdouts, stderrs = append(stdouts, &bytes.Buffer{}), append(stderrs, &bytes.Buffer{})
		c.Stdout, c.Stderr = stdouts[i], stderrs[i]
	}
	for i, c := range cmds {
		require.NoError(t, c.Start(), "start %d", i)
	}
	require.NoError(t, release.Close()) // every read sees EOF: go
	return stdouts, stderrs
}

// wait waits for c and returns its exit code; a failure to run at all
// fails the test.
func wait(t *testing.T, c *exec.Cmd) int {
	t.Helper()
	err := c.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err)
	}
	return c.ProcessState.ExitCode()
}

// TestConcurrentNextAdvancesOnce starts 20 agents' `next` on the same issue
// at once: the compare-and-swap lets exactly one move it.
func TestConcurrentNextAdvancesOnce(t *testing.T) {
	const racers = 20
	for round := range 5 {
		t.Run(fmt.Sprintf("round-%d", round+1), func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "review-gate"))
			id := w.create(t, "Add login page", "--stage", "implement.code")
			w.writeDoc(t, id, "review.md", reviewDone)

			env := processEnv("AGENTTREE_ROLE=developer")
			cmds := make([]*exec.Cmd, racers)
			for i := range cmds {
				cmds[i] = w.command(env, "next", "-i", fmt.Sprint(id), "--json")
			}
			outs, errs := startTogether(t, cmds)
			codes := map[int]int{}
			statuses := map[string]int{}
			for i, c := range cmds {
				code := wait(t, c)
				codes[code]++
				require.Contains(t, []int{0, 3}, code, "process %d: stdout %s stderr %s", i, outs[i], errs[i])
				res := decodeNext(t, outs[i].String())
				statuses[res.Status]++
				switch {
				case code == 0:
					assert.Equal(t, "advanced", res.Status)
					assert.Equal(t, "implementation_review", res.To)
				case res.From == "implementation_review":
					// Read after the move: an agent waits at the review.
					assert.Equal(t, "waiting", res.Status)
				default:
					// Lost the race: waiting (exit 3), naming who moved it.
					assert.Equal(t, "waiting", res.Status, "stdout %s", outs[i])
					require.NotEmpty(t, res.Reasons)
					assert.Contains(t, res.Reasons[0], "changed while this command ran", "a loser is stopped only by the compare-and-swap")
					assert.Contains(t, res.Reasons[0], "advance implement.code → implementation_review by the agent")
				}
			}
			t.Logf("exit codes %v, statuses %v", codes, statuses)
			assert.Equal(t, 1, codes[0], "exactly one process advances")
			assert.Equal(t, racers, codes[0]+codes[3])

			iss := w.issue(t, id)
			assert.Equal(t, "implementation_review", iss.Stage)
			assert.Equal(t, 2, iss.Version)
			advances := 0
			for _, h := range iss.History {
				if h.Kind == stages.MoveAdvance {
					advances++
				}
			}
			assert.Equal(t, 1, advances, "history: %+v", iss.History)
			require.Len(t, iss.History, 2)

			events := readEvents(t, filepath.Join(w.hostDir(id), "events.jsonl"))
			require.Len(t, events, 2)
			last := events[1]
			entries, _ := last["entries"].([]any)
			require.Len(t, entries, 1, "the move's write: %v", last)
			assert.Equal(t, "advance", entries[0].(map[string]any)["kind"])
			assert.EqualValues(t, 2, last["version"])
		})
	}
}

// TestConcurrentCreateAllocatesDistinctIDs creates 20 issues at once: the
// store lock gives each its own id.
func TestConcurrentCreateAllocatesDistinctIDs(t *testing.T) {
	const n = 20
	w := newWorkspace(t, testpipeline.Read(t, "review-gate"))
	env := processEnv()
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = w.command(env, "issue", "create", fmt.Sprintf("Issue %d", i), "--json")
	}
	outs, errs := startTogether(t, cmds)
	titles := map[int]string{}
	for i, c := range cmds {
		code := wait(t, c)
		out := outs[i].Bytes()
		if code != 0 {
			// On a machine so busy that the others held the list past its
			// lock timeout, the create refuses and says to try again,
			// having written nothing: a person does, and so does this.
			require.Contains(t, errs[i].String(), "the issue list is busy", "create %d: exit %d", i, code)
			r := w.run(t, humanEnv, "issue", "create", fmt.Sprintf("Issue %d", i), "--json")
			require.Equal(t, 0, r.code, "create %d, again: %s", i, r.stderr)
			out = []byte(r.stdout)
		}
		var iss issues.Issue
		require.NoError(t, json.Unmarshal(out, &iss))
		require.NotContains(t, titles, iss.ID, "id %d given twice", iss.ID)
		titles[iss.ID] = iss.Title
		assert.Equal(t, fmt.Sprintf("Issue %d", i), iss.Title)
	}
	for id := 1; id <= n; id++ {
		require.Contains(t, titles, id)
		iss := w.issue(t, id)
		assert.Equal(t, titles[id], iss.Title)
		assert.Equal(t, 1, iss.Version)
	}
}

// readEvents reads events.jsonl, requiring every line that ended to be a
// JSON object.
func readEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	// A kill mid-append leaves a last line without its newline, which
	// the next command drops (as the engine reads the log): it is no
	// event. Every line that ended is one.
	lines = lines[:len(lines)-1]
	var events []map[string]any
	for n, line := range lines {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "%s line %d is not JSON: %q", path, n+1, line)
		events = append(events, ev)
	}
	return events
}

// readIssueFile parses issue.yaml the way a reader outside agenttree would.
func readIssueFile(t *testing.T, path string) issues.Issue {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var iss issues.Issue
	require.NoError(t, yaml.Unmarshal(data, &iss), "issue.yaml does not parse:\n%s", data)
	return iss
}
