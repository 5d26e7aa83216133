//go:build unix

package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
)

func TestFeedback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	pr := e.openPR(t, f)
	n := pr.Number
	marks := []string{pr.FeedbackMark}
	markMoved := func(what string) {
		t.Helper()
		pr, err := f.PR(ctx, n)
		require.NoError(t, err)
		assert.NotContains(t, marks, pr.FeedbackMark, what)
		marks = append(marks, pr.FeedbackMark)
	}

	require.NoError(t, f.Comment(ctx, n, "CI passed"))
	markMoved("agenttree's comment")
	question, err := f.AddComment(ctx, n, "alice", "why a new table?")
	require.NoError(t, err)
	assert.Equal(t, 2, question)
	markMoved("a person's comment")
	thread, err := f.AddThread(ctx, n, local.NewThread{Path: "db/schema.sql", Line: 12, By: "bob", Body: "needs an index"})
	require.NoError(t, err)
	markMoved("a thread")
	require.NoError(t, f.ReplyToThread(ctx, n, thread, "alice", "agreed"))
	done, err := f.AddThread(ctx, n, local.NewThread{Path: "README.md", By: "bob", Body: "typo"})
	require.NoError(t, err)
	markMoved("another thread")
	require.NoError(t, f.ResolveThread(ctx, n, done, "bob"))
	require.NoError(t, f.ResolveThread(ctx, n, done, "carol"), "resolving twice is fine")
	pr, err = f.PR(ctx, n)
	require.NoError(t, err)
	assert.Equal(t, marks[len(marks)-1], pr.FeedbackMark, "resolving asks for nothing")

	feed, err := f.Feedback(ctx, n)
	require.NoError(t, err)
	require.Len(t, feed, 3, "the resolved thread is absent")
	assert.Equal(t, []string{"comment:1", "comment:2", "thread:1"}, []string{feed[0].ID, feed[1].ID, feed[2].ID})
	assert.Equal(t, forge.FeedbackComment, feed[0].Kind)
	assert.Equal(t, "agenttree", feed[0].Author)
	assert.Equal(t, "CI passed", feed[0].Body)
	assert.Equal(t, "alice", feed[1].Author)
	assert.Equal(t, "local:work#1/comment/2", feed[1].URL)
	th := feed[2]
	assert.Equal(t, forge.FeedbackThread, th.Kind)
	assert.Equal(t, "bob", th.Author)
	assert.Equal(t, "db/schema.sql", th.Path)
	assert.Equal(t, 12, th.Line)
	assert.Equal(t, "bob: needs an index\nalice: agreed", th.Body)
	rec, err := f.Record(ctx, n)
	require.NoError(t, err)
	assert.Equal(t, rec.Threads[0].Comments[1].At, th.At, "the latest comment")
	assert.Equal(t, "bob", rec.Threads[1].ResolvedBy, "the first to resolve it")

	data, err := os.ReadFile(filepath.Join(e.state, "host", "forge", "prs", "1.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "threads:")
	assert.Contains(t, string(data), "resolved: true")

	lazy := forge.Lazy(func() (forge.Forge, error) { return f, nil })
	rf, ok := forge.As[forge.ReviewFeed](lazy)
	require.True(t, ok, "found through the wrapper")
	again, err := rf.Feedback(ctx, n)
	require.NoError(t, err)
	assert.Equal(t, feed, again)
}

func TestFeedbackRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	n := e.openPR(t, f).Number
	thread, err := f.AddThread(ctx, n, local.NewThread{Path: "a.go", Line: 1, Body: "x"})
	require.NoError(t, err)

	tests := []struct {
		name     string
		call     func() error
		notFound bool
		says     string
	}{
		{"empty comment", func() error { _, err := f.AddComment(ctx, n, "alice", " \n"); return err }, false, "empty comment"},
		{"comment on no PR", func() error { _, err := f.AddComment(ctx, 9, "alice", "x"); return err }, true, "#9"},
		{"thread without a body", func() error { _, err := f.AddThread(ctx, n, local.NewThread{Path: "a.go"}); return err }, false, "first comment"},
		{"thread without a file", func() error { _, err := f.AddThread(ctx, n, local.NewThread{Body: "x"}); return err }, false, "the file"},
		{"thread on a negative line", func() error {
			_, err := f.AddThread(ctx, n, local.NewThread{Path: "a.go", Line: -1, Body: "x"})
			return err
		}, false, "lines count from 1"},
		{"thread on no PR", func() error { _, err := f.AddThread(ctx, n+1, local.NewThread{Path: "a.go", Body: "x"}); return err }, true, "#2"},
		{"empty reply", func() error { return f.ReplyToThread(ctx, n, thread, "bob", "") }, false, "empty reply"},
		{"reply to no thread", func() error { return f.ReplyToThread(ctx, n, thread+1, "bob", "y") }, true, "no review thread 2"},
		{"resolve no thread", func() error { return f.ResolveThread(ctx, n, 7, "bob") }, true, "no review thread 7"},
		{"feedback of no PR", func() error { _, err := f.Feedback(ctx, 9); return err }, true, "#9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.Error(t, err)
			assert.Equal(t, tt.notFound, errors.Is(err, forge.ErrNotFound), err.Error())
			assert.Contains(t, err.Error(), tt.says)
		})
	}
	rec, err := f.Record(ctx, n)
	require.NoError(t, err)
	assert.Empty(t, rec.Comments, "nothing was written")
	require.Len(t, rec.Threads, 1)
	assert.Len(t, rec.Threads[0].Comments, 1)
}

// Records written before comments had ids and authors read as if they had
// them, and new comments number on from there.
func TestFeedbackOfAnOlderRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	n := e.openPR(t, f).Number
	path := filepath.Join(e.state, "host", "forge", "prs", "1.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	old := string(data) + "comments:\n  - body: first\n    at: 2025-01-01T00:00:00Z\n  - body: second\n    at: 2025-01-02T00:00:00Z\n"
	writeRecord(t, path, old)

	id, err := f.AddComment(ctx, n, "alice", "third")
	require.NoError(t, err)
	assert.Equal(t, 3, id)
	feed, err := f.Feedback(ctx, n)
	require.NoError(t, err)
	var got []string
	for _, fb := range feed {
		got = append(got, fb.ID+" "+fb.Author+" "+fb.Body)
	}
	assert.Equal(t, []string{"comment:1 agenttree first", "comment:2 agenttree second", "comment:3 alice third"}, got)
}

func TestAddCommentConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	n := e.openPR(t, f).Number
	ids := make([]int, 8)
	atOnce(len(ids), func(i int) {
		id, err := f.AddComment(ctx, n, "alice", "same time")
		if assert.NoError(t, err) {
			ids[i] = id
		}
	})
	slices.Sort(ids)
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8}, ids, "one id each, none lost")
}
