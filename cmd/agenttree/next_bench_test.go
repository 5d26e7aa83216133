package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttree/agenttree/internal/statedir"
)

// benchNextConfig is bench/next's pipeline: stage a guarded by two file
// gates that pass, then b.
const benchNextConfig = `project: bench
stages:
  - name: a
    pre_completion:
      - file_exists: review.md
      - section_check: {file: review.md, section: Critical Issues, expect: empty}
  - name: b
  - name: done
    terminal: completion
`

// BenchmarkNextInProcess is `agenttree next` without the process: the
// command's own work (the command tree, the config, the issue, the gates,
// the durable move, the report) over a loop of run, issue 1 put back at a
// before each. What the process adds on top (the binary's loading and
// package initialisation) is bench/startup's `linked` floor; the two side
// by side say how much of a `next` is the command (bench/README.md).
//
//	go test -run '^$' -bench NextInProcess -benchmem ./cmd/agenttree
//	go test -run '^$' -bench NextInProcess -cpuprofile next.pprof ./cmd/agenttree
func BenchmarkNextInProcess(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".agenttree.yaml"), []byte(benchNextConfig), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", dir, "init", "-q", "-b", "main").CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	ctx := context.Background()
	getenv := func(k string) string {
		if strings.HasPrefix(k, "AGENTTREE_") {
			return ""
		}
		return os.Getenv(k)
	}
	runOK := func(args ...string) {
		var out, errOut bytes.Buffer
		if code := run(ctx, dir, args, getenv, strings.NewReader(""), &out, &errOut); code != 0 {
			b.Fatalf("agenttree %s: exit %d: %s%s", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
	runOK("issue", "create", "Benchmark the gates", "--stage", "a")
	layout := statedir.Layout{Root: filepath.Join(dir, "_agenttree")}
	review := "# Review\n\n## Critical Issues\n\nNone\n\n## Suggestions\n\n- rename the handler\n"
	if err := os.WriteFile(filepath.Join(layout.Docs(1), "review.md"), []byte(review), 0o644); err != nil {
		b.Fatal(err)
	}
	saved := map[string][]byte{}
	for _, name := range []string{"issue.yaml", "events.jsonl"} {
		data, err := os.ReadFile(filepath.Join(layout.Issue(1), name))
		if err != nil {
			b.Fatal(err)
		}
		saved[name] = data
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for name, data := range saved {
			if err := os.WriteFile(filepath.Join(layout.Issue(1), name), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		runOK("next", "-i", "1")
	}
}
