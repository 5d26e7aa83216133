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
func ExactArgs(n int) cobra.PositionalArgs { return RangeArgs(n, n) }

// MinimumNArgs is cobra.MinimumNArgs in the command's own words, as
// ExactArgs ("send ID MESSAGE...": "agenttree send needs MESSAGE").
func MinimumNArgs(n int) cobra.PositionalArgs { return RangeArgs(n, -1) }

// MaximumNArgs is cobra.MaximumNArgs in the command's own words, as
// ExactArgs.
func MaximumNArgs(n int) cobra.PositionalArgs { return RangeArgs(0, n) }

// RangeArgs is cobra.RangeArgs in the command's own words, as ExactArgs:
// at least least arguments and, unless most is negative, at most most.
func RangeArgs(least, most int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= least && (most < 0 || len(args) <= most) {
			return nil
		}
		use := strings.Fields(cmd.Use)[1:]
		names := positional(use)
		usage := "`" + cmd.CommandPath() + " " + strings.Join(use, " ") + "`"
		if len(args) >= least {
			return fmt.Errorf("%s takes %s, and was given %d arguments: %s (quote a value that holds spaces)",
				cmd.CommandPath(), takes(names, least, most), len(args), usage)
		}
		missing := "missing"
		if len(args) < len(names) {
			missing = names[len(args)]
		}
		if missing == "ID" {
			return fmt.Errorf("which issue? name it: %s (`agenttree status` lists them)", usage)
		}
		needed := names[min(len(args), len(names)):min(least, len(names))]
		for i, n := range needed {
			needed[i] = strings.TrimSuffix(n, "...")
		}
		if len(needed) == 0 {
			needed = []string{count(least-len(args), "more argument")}
		}
		return fmt.Errorf("%s needs %s: %s", cmd.CommandPath(), strings.Join(needed, " and "), usage)
	}
}

// takes says what a command takes: the arguments its usage names, and
// how many when that is not all of them ("at most 1 argument ([ID])").
func takes(names []string, least, most int) string {
	if least == most && len(names) == most {
		return strings.Join(names, " and ")
	}
	what := count(most, "argument")
	if least != most {
		what = "at most " + what
	}
	if len(names) > 0 {
		what += " (" + strings.Join(names, " ") + ")"
	}
	return what
}

// count says n of what: "1 argument", "2 arguments", "no argument".
func count(n int, what string) string {
	switch n {
	case 0:
		return "no " + what
	case 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
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
