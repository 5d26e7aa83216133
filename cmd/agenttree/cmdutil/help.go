package cmdutil

// What the exit codes most commands share mean, as their help says it.
const (
	ExitUsage         = "2 bad usage"
	ExitUsageOrConfig = "2 bad usage or config"
	ExitNotPerson     = "3 not a person"
	ExitOnlyPerson    = "3 only a person can"
)

// ExitStatus is the paragraph that ends a command's long help: each exit
// code it ends with and what that means. lines are its lines, each a
// comma-separated list of "CODE meaning"; they are joined with a comma,
// and the last ends with a full stop.
func ExitStatus(lines ...string) string {
	s := "Exit status: "
	for i, l := range lines {
		if i > 0 {
			s += ",\n"
		}
		s += l
	}
	return s + "."
}
