package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/syncbuf"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// chromium is the Chromium the browser test drives: Debian's, which
// .ci/run installs, else one on PATH.
func chromium(t *testing.T) string {
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no Chromium found (/usr/bin/chromium, or chromium, chromium-browser, google-chrome on PATH): " +
		"the board's browser test needs one; `apt-get install chromium` (.ci/run does)")
	return ""
}

// boardURLRE is the URL `agenttree board` prints.
var boardURLRE = regexp.MustCompile(`board: (http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]+)`)

// The board in a real browser: an issue arriving at the review shows in
// its column live (server-sent events, no reload), a click on approve
// merges its PR on the local forge, and a second tab sees it move to
// accepted. Screenshots of the board and of the issue's page (at a
// phone's width) are written to testdata/board-screenshots (ignored by
// git), named in the log.
func TestTheBoardInABrowser(t *testing.T) {
	exe := chromium(t)
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	id := w.create(t, "Add search <script>alert(1)</script>", "--stage", "implement")
	gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	gittest.Commit(t, w.dir, "ok.txt", "ok\n", "search")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out, errOut syncbuf.Buffer
	served := make(chan int, 1)
	go func() {
		getenv := func(k string) string { return humanEnv[k] }
		served <- run(ctx, w.dir, []string{"--config", w.config, "board"}, getenv, strings.NewReader(""), &out, &errOut)
	}()
	var url string
	require.Eventually(t, func() bool {
		m := boardURLRE.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 20*time.Second, 20*time.Millisecond, "the board prints its URL: %s %s", out.String(), errOut.String())

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	tab1, cancel1 := chromedp.NewContext(alloc)
	defer cancel1()
	tab2, cancel2 := chromedp.NewContext(tab1) // a second tab of the same browser
	defer cancel2()
	card := func(stage string) string {
		return `section.column[data-stage="` + stage + `"] article[data-issue="` + itoa(id) + `"]`
	}
	for _, tab := range []context.Context{tab1, tab2} {
		require.NoError(t, chromedp.Do(tab, chromedp.Navigate(url), chromedp.WaitVisible(card("implement"))))
	}

	// The agent's work reaches the review while both tabs look on.
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	r := w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	require.Equal(t, "review", w.issue(t, id).Stage)
	require.NoError(t, chromedp.Do(tab1, chromedp.WaitVisible(`#needs-you `+`article[data-issue="`+itoa(id)+`"] button.approve`),
		chromedp.WaitVisible(card("review"))), "the issue arrives at the review without a reload")
	title, err := chromedp.Run(tab1, chromedp.Text(card("review")+" a.title"))
	require.NoError(t, err)
	assert.Contains(t, title, "<script>alert(1)</script>", "a hostile title is text on the page")

	shots := filepath.Join("testdata", "board-screenshots")
	require.NoError(t, os.MkdirAll(shots, 0o755))
	board, err := chromedp.Run(tab1, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(shots, "board.png"), board, 0o644))

	// A click on approve merges the PR; the result is the engine's.
	require.NoError(t, chromedp.Do(tab1,
		chromedp.Click(`#needs-you article[data-issue="`+itoa(id)+`"] button.approve`),
		chromedp.WaitVisible(`#result .result`)))
	result, err := chromedp.Run(tab1, chromedp.Text(`#result .result`))
	require.NoError(t, err)
	assert.Contains(t, result, "approve #"+itoa(id)+": done", result)
	assert.Contains(t, result, "merged PR #1")
	assert.Equal(t, "accepted", w.issue(t, id).Stage)
	assert.Contains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "ok.txt", "merged on the local forge")

	// The second tab sees it move, and shows the issue's page.
	require.NoError(t, chromedp.Do(tab2, chromedp.WaitVisible(card("accepted"))), "the other tab sees the move live")
	require.NoError(t, chromedp.Do(tab2,
		chromedp.EmulateViewport(412, 915),
		chromedp.Click(card("accepted")+" a.title"),
		chromedp.WaitVisible(`svg.pipeline .here`)))
	issuePage, err := chromedp.Run(tab2, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(shots, "issue.png"), issuePage, 0o644))
	abs, _ := filepath.Abs(shots)
	t.Logf("screenshots of the board and of issue %d's page: %s (board.png, issue.png)", id, abs)

	cancel()
	select {
	case code := <-served:
		assert.Equal(t, 0, code, errOut.String())
	case <-time.After(10 * time.Second):
		t.Error("the board did not stop when its context ended")
	}
}
