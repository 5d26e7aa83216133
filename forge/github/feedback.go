package github

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
)

// Feedback lists what reviewers said on a PR: its conversation comments
// and the bodies of reviews that commented or requested changes (REST,
// each page a conditional request, so an unchanged list costs no rate
// limit), and its unresolved review threads (GraphQL). That is three
// requests for most PRs; call it when the PR's FeedbackMark moved.
func (c *Client) Feedback(ctx context.Context, number int) (_ []forge.Feedback, err error) {
	defer asForgeError(&err)
	comments, err := c.api.Comments(ctx, number)
	if err != nil {
		return nil, err
	}
	reviews, err := c.api.PullReviews(ctx, number)
	if err != nil {
		return nil, err
	}
	threads, err := c.api.ReviewThreads(ctx, number)
	if err != nil {
		return nil, err
	}
	out := make([]forge.Feedback, 0, len(comments)+len(reviews)+len(threads))
	for _, cm := range comments {
		out = append(out, forge.Feedback{ID: forge.FeedbackComment.ID(strconv.FormatInt(cm.ID, 10)),
			Kind: forge.FeedbackComment, Author: login(cm.User.Login), Body: cm.Body, URL: cm.HTMLURL, At: cm.CreatedAt})
	}
	for _, rv := range reviews {
		if fb, ok := reviewFeedback(rv); ok {
			out = append(out, fb)
		}
	}
	for _, th := range threads {
		if !th.IsResolved {
			out = append(out, threadFeedback(th))
		}
	}
	forge.SortFeedback(out)
	return out, nil
}

// reviewFeedback is a review's body, if the review has one and comments
// or requests changes: an approval's or a dismissed review's words are
// not asking for anything, and a pending review is not sent yet.
func reviewFeedback(rv ghapi.PullReview) (forge.Feedback, bool) {
	if strings.TrimSpace(rv.Body) == "" || rv.SubmittedAt == nil ||
		(rv.State != "CHANGES_REQUESTED" && rv.State != "COMMENTED") {
		return forge.Feedback{}, false
	}
	return forge.Feedback{ID: forge.FeedbackReview.ID(strconv.FormatInt(rv.ID, 10)), Kind: forge.FeedbackReview,
		Author: login(rv.User.Login), Body: rv.Body, URL: rv.HTMLURL, At: *rv.SubmittedAt}, true
}

// threadFeedback is an unresolved thread, by the author of its first
// comment, linked to it.
func threadFeedback(th ghapi.ReviewThread) forge.Feedback {
	fb := forge.Feedback{ID: forge.FeedbackThread.ID(th.ID), Kind: forge.FeedbackThread, Path: th.Path, Line: th.Line}
	for i, tc := range th.Comments {
		if i == 0 {
			fb.Author, fb.URL = login(tc.Author), tc.URL
		}
		fb.AddThreadComment(login(tc.Author), tc.Body, tc.CreatedAt)
	}
	if th.MoreComments > 0 {
		fb.Body += fmt.Sprintf("\n(%d more comments: %s)", th.MoreComments, fb.URL)
	}
	return fb
}

// login is a writer's login; GitHub shows a deleted account as ghost.
func login(l string) string { return cmp.Or(l, "ghost") }

// feedbackMark is the PR's forge.FeedbackMark: its counts of comments,
// reviews and review threads.
func feedbackMark(g *ghapi.PullRequest) string {
	return fmt.Sprintf("%d/%d/%d", g.CommentCount, g.ReviewCount, g.ThreadCount)
}
