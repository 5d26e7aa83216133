//go:build unix

package main

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/statedir"
)

// Hostile text an agent writes where the board shows it: markup that
// would run in the person's browser, and terminal controls (a colour, a
// window title, a clipboard write) that would act on a terminal.
const (
	hostileScript = `<script>alert(1)</script>`
	hostileImg    = `<img src=x onerror=alert(2)>`
	hostileEsc    = "\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b]52;c;cHduZWQ=\x07"
)

// The board in the another-user deployment (docs/SECURITY.md, "The
// board"): a person runs `agenttree board`; the agent, an OS user of its
// own with a session and a clone, cannot find the login token anywhere it
// can read, reaches the port and gets 401 or 403 for pages and actions
// alike, and moves nothing; what it wrote (its CI feedback document, its
// pane) shows on the issue's page as text; and the person's approve
// through the board merges the PR and is recorded as the person's.
func TestTheBoardKeepsAnotherUsersAgentOut(t *testing.T) {
	agent := newPaneAgent(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("the agent's requests to the board are made with bash's /dev/tcp: no bash")
	}
	r := newRigTmux(t, "controller", agent.config())
	ostest.OpenUp(t, r.dir)
	layout := statedir.Layout{Root: filepath.Join(r.dir, "_agenttree")}
	ctl := r.startController(t)
	require.Eventually(t, func() bool { _, err := os.Stat(layout.Socket()); return err == nil }, settleWithin, lookEvery)

	// The agent's work, with a hostile file name and commit subject
	// (which reach the board only as the diff stat's counts), to the
	// review; then hostile text in its documents and its pane.
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	agent.fifo(t, id)
	res := r.run(t, humanEnv, "start", itoa(id))
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	out, code := agent.do(t, id, fmt.Sprintf(`echo ok > ok.txt && echo x > %s && git add -A && git commit -qm %s && "$AT" next`,
		shQuote(hostileImg+".txt"), shQuote(hostileScript+" "+hostileEsc)))
	require.Equal(t, 0, code, out)
	r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
	feedback := filepath.Join(layout.Docs(id), "ci_feedback.md")
	out, code = agent.do(t, id, fmt.Sprintf(`printf '%%s\n' %s %s %s > %q`, shQuote("ci "+hostileScript), shQuote("ci "+hostileImg), shQuote("ci "+hostileEsc), feedback))
	require.Equal(t, 0, code, out)
	// The pane's terminal is the agent program's standard input (fd 3 of
	// its scripts): what is written there is the pane's text.
	out, code = agent.do(t, id, fmt.Sprintf(`printf '%%s\n' %s %s %s >&3`, shQuote("pane "+hostileScript), shQuote("pane "+hostileImg), shQuote("pane "+hostileEsc)))
	require.Equal(t, 0, code, out)

	// The person's board, its output where the person reads it (a
	// terminal: here a file in a directory of the person's alone).
	outDir := t.TempDir()
	require.NoError(t, os.Chmod(outDir, 0o700))
	boardOut := filepath.Join(outDir, "board.out")
	f, err := os.Create(boardOut)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	board := r.command(processEnv(), "board")
	board.Stdout, board.Stderr = f, f
	require.NoError(t, board.Start())
	t.Cleanup(func() {
		if board.ProcessState == nil {
			_ = board.Process.Kill()
			_ = board.Wait()
		}
	})
	var boardURL string
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(boardOut)
		m := boardURLRE.FindStringSubmatch(string(data))
		if m != nil {
			boardURL = m[1]
		}
		return m != nil
	}, settleWithin, lookEvery, "the board prints its URL")
	u, err := url.Parse(boardURL)
	require.NoError(t, err)
	token := u.Query().Get("token")
	require.Len(t, token, 64)
	base := "http://" + u.Host

	// 1. The token is nowhere the agent can read.
	asAgent := func(name string, args ...string) cliResult {
		t.Helper()
		cmd := agent.user.Command(name, args...)
		cmd.Dir = os.TempDir()
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
		return runCmd(t, cmd)
	}
	pid := strconv.Itoa(board.Process.Pid)
	for _, path := range []string{boardOut, "/proc/" + pid + "/fd/1", "/proc/" + pid + "/environ", "/proc/" + pid + "/mem"} {
		res := asAgent("cat", path)
		assert.NotEqual(t, exitOK, res.code, "the agent read %s", path)
		assert.NotContains(t, res.stdout, token, "the agent read the token in %s", path)
	}
	res = asAgent("cat", "/proc/"+pid+"/cmdline")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.NotContains(t, res.stdout, token, "the board's command line holds the token")
	// Everything of this test's (the repository, the state directory,
	// the clone, the logs, the board's output) and the agents' own.
	searched := []string{filepath.Dir(outDir), agent.dir, "/dev/shm"}
	res = asAgent("grep", append([]string{"-rlsF", "-D", "skip", "--", token}, searched...)...)
	assert.Empty(t, res.stdout, "files the agent can read hold the token")
	res = asAgent("grep", append([]string{"-rlsF", "-D", "skip", "--", "ci " + hostileImg}, searched...)...)
	assert.Contains(t, res.stdout, feedback, "the agent's search reads the state directory (else it shows nothing)")
	res = runCmd(t, exec.Command("grep", append([]string{"-rlsF", "-D", "skip", "--", token}, searched...)...))
	assert.Equal(t, boardOut+"\n", res.stdout, "the person's search finds the token where it is, and only there")

	// The agent's process reaches the board and gets nothing, nor moves
	// anything.
	before := r.issue(t, id)
	guess := strings.Repeat("0", 64)
	page := "/issues/" + itoa(id)
	approve := page + "/approve"
	for _, tt := range []struct {
		name, method, path, header, body string
		want                             int
	}{
		{"the board", "GET", "/", "", "", http.StatusUnauthorized},
		{"the issue's page", "GET", page, "", "", http.StatusUnauthorized},
		{"the event stream", "GET", "/events", "", "", http.StatusUnauthorized},
		{"approve", "POST", approve, "", "csrf=" + guess, http.StatusUnauthorized},
		{"the board, a guessed token", "GET", "/?token=" + guess, "", "", http.StatusForbidden},
		{"the issue's page, a guessed token in the header", "GET", page, "X-Agenttree-Token: " + guess, "", http.StatusForbidden},
		{"the metrics, a guessed token", "GET", "/metrics?token=" + guess, "", "", http.StatusForbidden},
		{"approve, a guessed token", "POST", approve + "?token=" + guess, "", "csrf=" + guess, http.StatusForbidden},
		{"approve, a guessed token in the header", "POST", approve, "X-Agenttree-Token: " + guess, "csrf=" + guess, http.StatusForbidden},
	} {
		t.Run("agent's request: "+tt.name, func(t *testing.T) {
			req := fmt.Sprintf("%s %s HTTP/1.0\r\nHost: %s\r\nOrigin: %s\r\n", tt.method, tt.path, u.Host, base)
			if tt.header != "" {
				req += tt.header + "\r\n"
			}
			if tt.method == "POST" {
				req += fmt.Sprintf("Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n", len(tt.body))
			}
			req += "\r\n" + tt.body
			res := asAgent(bash, "-c", `exec 3<>"/dev/tcp/$1/$2" && printf '%s' "$3" >&3 && head -n 1 <&3`, "bash", u.Hostname(), u.Port(), req)
			require.Equal(t, exitOK, res.code, "the agent reaches the board: %s", res.stderr)
			assert.Regexp(t, `^HTTP/1\.[01] `+strconv.Itoa(tt.want)+` `, res.stdout)
		})
	}
	after := r.issue(t, id)
	assert.Equal(t, before.Version, after.Version, "the agent's requests changed the issue")
	res = r.run(t, humanEnv, "status", itoa(id), "--json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, `"stage": "implementation_review"`)

	// 2. What the agent wrote is text on the issue's page, as the person
	// fetches it.
	var body, ciLog, paneText string
	require.Eventually(t, func() bool {
		var err error
		if body, err = fetch(base + page + "?token=" + token); err != nil {
			return false
		}
		ciLog, paneText = preText(body, "log"), preText(body, "pane")
		return strings.Contains(paneText, "pane "+hostileImg)
	}, settleWithin, lookEvery, "the pane's text shows on the page: %s", body)
	for path, text := range map[string]string{page: body, "/": boardGet(t, base+"/?token="+token)} {
		for _, raw := range []string{hostileScript, hostileImg, "<img src=x", "\x1b", "\x07"} {
			assert.NotContains(t, text, raw, "%s holds the agent's %q as it wrote it", path, raw)
		}
	}
	for _, tt := range []struct{ name, text, prefix string }{{"CI log", ciLog, "ci "}, {"pane", paneText, "pane "}} {
		assert.Contains(t, tt.text, tt.prefix+hostileScript, "the %s shows the agent's markup as text", tt.name)
		assert.Contains(t, tt.text, tt.prefix+hostileImg, "the %s shows the agent's markup as text", tt.name)
		assert.NotContains(t, tt.text, "\x1b", "the %s keeps terminal controls", tt.name)
		assert.NotContains(t, tt.text, "\x07", "the %s keeps terminal controls", tt.name)
	}
	assert.Contains(t, ciLog, "ci red", "the CI log keeps the text around the controls")

	// 3. The person's approve, with the token and the page's CSRF token,
	// from the board's origin.
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(body)
	require.NotNil(t, m, "the issue's page offers approve: %s", body)
	req, err := http.NewRequest("POST", base+approve+"?token="+token, strings.NewReader(url.Values{"csrf": {m[1]}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", answer)
	assert.Contains(t, string(answer), "approve #"+itoa(id)+": done")
	assert.Contains(t, string(answer), "merged PR #1")
	iss := r.issue(t, id)
	assert.Equal(t, "accepted", iss.Stage)
	var approval string
	for _, h := range iss.History {
		if h.From == "implementation_review" {
			approval = h.Actor
		}
	}
	assert.Equal(t, "human", approval, "the approval is the person's: %+v", iss.History)
	assert.Contains(t, gittest.Run(t, r.bare(), "ls-tree", "--name-only", "main"), hostileImg+".txt", "the agent's work is merged")

	require.NoError(t, board.Process.Signal(os.Interrupt))
	assert.Equal(t, exitOK, wait(t, board), "the board stops when interrupted")
	stopController(t, ctl)
}

// boardGet fetches url and returns its body, failing unless it is 200.
func boardGet(t *testing.T, url string) string {
	t.Helper()
	body, err := fetch(url)
	require.NoError(t, err)
	return body
}

// fetch is url's body, or an error unless it answers 200.
func fetch(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, body)
	}
	return string(body), err
}

// preText is the text of the page's <pre class="class">, unescaped.
func preText(page, class string) string {
	m := regexp.MustCompile(`(?s)<pre class="` + class + `">(.*?)</pre>`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// shQuote quotes s for sh, every byte as it is.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
