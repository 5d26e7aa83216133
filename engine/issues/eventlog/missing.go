package eventlog

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned for an issue id with no issue.yaml.
var ErrNotFound = errors.New("issue not found")

// MissingError is an issue whose directory is gone. Create gave its id,
// which is never given again, and nothing agenttree does removes an
// issue's directory, so it was removed outside agenttree: nothing else
// holds what it held. It is ErrNotFound.
type MissingError struct {
	ID int
	// Dir is the directory that is gone (Store.HostDir).
	Dir string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("issue %d is missing: %s", e.ID, e.Problem())
}

// Problem says what is wrong and what a person does, without the id.
func (e *MissingError) Problem() string {
	return fmt.Sprintf("its directory %s was removed outside agenttree (agenttree never removes one, and never gives its id to another issue); "+
		"nothing else holds its state, so a person puts the directory back from a backup if one has it; its branch and PR, if it had them, are where they were",
		e.Dir)
}

func (e *MissingError) Unwrap() error { return ErrNotFound }
