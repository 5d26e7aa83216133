package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// ExactArgs is cobra.ExactArgs saying, in the command's own words, what is
// missing or too much: the arguments its usage line names ("approve ID"),
// "which issue?" for an ID, and the usage to copy. cobra's own "accepts 1
// arg(s), received 0" says neither.
func ExactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		use := strings.Fields(cmd.Use)[1:]
		names := positional(use)
		usage := "`" + cmd.CommandPath() + " " + strings.Join(use, " ") + "`"
		if len(args) > n {
			return fmt.Errorf("%s takes %s, and was given %d arguments: %s (quote a value that holds spaces)",
				cmd.CommandPath(), strings.Join(names, " and "), len(args), usage)
		}
		missing := "missing"
		if len(args) < len(names) {
			missing = names[len(args)]
		}
		if missing == "ID" {
			return fmt.Errorf("which issue? name it: %s (`agenttree status` lists them)", usage)
		}
		return fmt.Errorf("%s needs %s: %s", cmd.CommandPath(), strings.Join(names[len(args):], " and "), usage)
	}
}

// positional are the arguments a usage line names, without its flags and
// their values ("ID STAGE --reason TEXT": ID, STAGE).
func positional(use []string) []string {
	var out []string
	for i := 0; i < len(use); i++ {
		if strings.HasPrefix(use[i], "-") {
			i++ // its value
			continue
		}
		out = append(out, use[i])
	}
	return out
}
