// Package exitcode names the exit statuses of the agenttree command: what
// a script or an agent's harness reads of it. They are a contract, so the
// reference documentation lists them from this table.
package exitcode

// Code is an exit status of agenttree.
type Code int

const (
	// OK: the command did what it was asked.
	OK Code = 0
	// Blocked: a gate failed (every reason printed), the issue stepped
	// back, or the work of entering a stage is unfinished.
	Blocked Code = 1
	// Usage: bad usage, or a config that does not load.
	Usage Code = 2
	// Waiting: a person or the controller acts next, another process
	// has the issue, or the state's disk takes no writes (full or
	// read-only): nothing changed.
	Waiting Code = 3
	// Timeout: `pr wait` saw CI not finish in time.
	Timeout Code = 4
	// Interrupted: the command was interrupted (Ctrl-C).
	Interrupted Code = 130
)

// Doc is what an exit status tells its reader.
type Doc struct {
	Code Code
	// Name is the constant's name, for the reference.
	Name string
	Doc  string
}

// All lists every exit status, in order, with what it means.
func All() []Doc {
	return []Doc{
		{OK, "OK", "The command did what it was asked: the issue moved, or is in a final stage."},
		{Blocked, "Blocked", "A gate failed (every reason is printed), the issue stepped back, or the work of entering a stage is unfinished."},
		{Usage, "Usage", "Bad usage, or a config that does not load."},
		{Waiting, "Waiting", "A person or the controller acts next (an escalation included), another process has the issue, or the state's disk is full or read-only (nothing changed; free space, then run the command again)."},
		{Timeout, "Timeout", "`pr wait`: CI did not finish in time."},
		{Interrupted, "Interrupted", "The command was interrupted (Ctrl-C)."},
	}
}
