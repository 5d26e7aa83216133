package main

import "github.com/agenttree/agenttree/internal/exitcode"

// The exit statuses the tests expect, as run returns them.
const (
	exitOK          = int(exitcode.OK)
	exitBlocked     = int(exitcode.Blocked)
	exitUsage       = int(exitcode.Usage)
	exitWaiting     = int(exitcode.Waiting)
	exitInterrupted = int(exitcode.Interrupted)
)
