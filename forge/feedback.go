package forge

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// ReviewFeed is a forge that can list what reviewers said on a PR.
type ReviewFeed interface {
	// Feedback lists the PR's conversation comments, the bodies of its
	// reviews that comment or request changes, and its unresolved review
	// threads, oldest first. A resolved thread is absent. What the bot
	// itself wrote is included: callers remember the IDs they handled.
	Feedback(ctx context.Context, number int) ([]Feedback, error)
}

// FeedbackKind says what a piece of Feedback is.
type FeedbackKind string

const (
	// FeedbackComment is a comment on the PR's conversation.
	FeedbackComment FeedbackKind = "comment"
	// FeedbackReview is a review's body, from a review that requested
	// changes or commented.
	FeedbackReview FeedbackKind = "review"
	// FeedbackThread is an unresolved review thread on a line of the diff.
	FeedbackThread FeedbackKind = "thread"
)

// ID is the Feedback ID of the item of this kind that the forge calls id:
// "comment:123", "review:45", "thread:PRRT_x".
func (k FeedbackKind) ID(id string) string { return string(k) + ":" + id }

// Feedback is one thing a reviewer said on a PR.
type Feedback struct {
	// ID is stable and unique within the PR: Kind, a colon, and the
	// forge's id of the item (see FeedbackKind.ID). A thread keeps its ID
	// as replies come in.
	ID     string       `json:"id"`
	Kind   FeedbackKind `json:"kind"`
	Author string       `json:"author"`
	// Path and Line place a thread in the diff; Line is 0 when the forge
	// has none (an outdated thread).
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	// Body is what was said; for a thread, its comments in order, one
	// "author: body" line each.
	Body string `json:"body"`
	URL  string `json:"url,omitempty"`
	// At is when it was said; for a thread, its latest comment.
	At time.Time `json:"at"`
}

// AddThreadComment adds a thread's next comment to its Feedback: a line
// "author: body" in Body, and At moved to the comment's time if later.
func (fb *Feedback) AddThreadComment(author, body string, at time.Time) {
	if fb.Body != "" {
		fb.Body += "\n"
	}
	fb.Body += author + ": " + body
	if at.After(fb.At) {
		fb.At = at
	}
}

// SortFeedback orders feedback oldest first, by ID where times tie, so
// that a forge's answer does not depend on the order it read things in.
func SortFeedback(fb []Feedback) {
	slices.SortStableFunc(fb, func(a, b Feedback) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID))
	})
}
