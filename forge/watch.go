package forge

import (
	"context"
	"time"
)

// Change is a forge's word that something about a pull request may have
// changed: CI finished or was started, a push, a review or a review
// comment, the PR opened, closed or merged. It only says "look again
// now", never what to conclude: the controller reads the PR as it always
// does, so a forged or stale change costs one look and nothing else
// (docs/ARCHITECTURE.md §6).
type Change struct {
	// PR is the pull request's number; 0 when the forge names only a
	// commit (a status, a check suite of a push).
	PR int `json:"pr,omitempty"`
	// SHA is the commit the change is about; "" when not known.
	SHA string `json:"sha,omitempty"`
	// What is the kind of change as the forge calls it (check_run,
	// pull_request, push, ci_finished, ...), for logs and metrics.
	What string `json:"what"`
}

// Watcher is a forge that tells of changes as they happen: the local
// forge when its CI finishes, GitHub through webhooks. Watch calls changed
// for each change, from one goroutine at a time, until ctx is done (then
// it returns nil) or the watch cannot go on (then it returns why, and
// the caller may call it again later).
//
// Polling stays the source of truth. A change makes the controller look
// at the PR sooner; one lost (a forwarder that died, a delivery GitHub
// gave up on) is found by the next poll.
type Watcher interface {
	Watch(ctx context.Context, changed func(Change)) error
}

// WatchHealth is a Watcher that can say whether its changes arrive: a
// watcher that is healthy lets the controller poll each PR less often
// (controller.events, docs/CONFIG.md). Healthy reports since when the
// watch has been delivering without a gap; the zero time means it is not
// healthy now (not started, failed, or a gap it has not filled yet).
type WatchHealth interface {
	Healthy() time.Time
}
