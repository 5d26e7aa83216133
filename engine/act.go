package engine

import (
	"context"

	"github.com/agenttree/agenttree/engine/act"
	"github.com/agenttree/agenttree/engine/intake"
	"github.com/agenttree/agenttree/engine/issues"
)

// The vocabulary of a command is package act's: who acts, and what the
// command came to. The engine's callers name it here as they always have.

type (
	ActorKind = act.ActorKind
	Actor     = act.Actor
	Status    = act.Status
	Result    = act.Result
	StepBack  = act.StepBack
	Done      = act.Done
	Outcome   = act.Outcome
	Order     = act.Order
	Place     = act.Place
)

const (
	ActorAgent      = act.ActorAgent
	ActorHuman      = act.ActorHuman
	ActorController = act.ActorController

	StatusAdvanced    = act.StatusAdvanced
	StatusBlocked     = act.StatusBlocked
	StatusWaiting     = act.StatusWaiting
	StatusFinal       = act.StatusFinal
	StatusSteppedBack = act.StatusSteppedBack
	StatusEscalated   = act.StatusEscalated
	StatusDone        = act.StatusDone
)

// ErrNotReview is returned when approve is used outside a human review.
var ErrNotReview = act.ErrNotReview

// ActorFromEnv is who the environment says acts (act.ActorFromEnv).
func ActorFromEnv(getenv func(string) string) Actor { return act.ActorFromEnv(getenv) }

// NewIssue is what `issue create` asks for (intake.NewIssue).
type NewIssue = intake.NewIssue

// MaxTitleLen is the longest title an issue may have, in characters.
const MaxTitleLen = intake.MaxTitleLen

// Create checks req against the config and stores a new issue at the
// start of its flow, or at req.Stage (intake.Create).
func (e *Engine) Create(ctx context.Context, req NewIssue) (*issues.Issue, error) {
	return intake.Create(ctx, e.Config, e.Store, req)
}
