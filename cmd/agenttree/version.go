package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionCmd prints what --version prints: people type either.
func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print agenttree's version (as --version does)",
		Example: "  agenttree version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "agenttree %s\n", version())
			return err
		},
	}
}

// version is this build's: the module version `go install` stamps, else
// the commit it was built from, with "+dirty" when the tree had changes.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v != "" && v != "(devel)" {
		return v
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v = "devel " + rev
	if settings["vcs.modified"] == "true" {
		v += "+dirty"
	}
	if t := settings["vcs.time"]; t != "" {
		v += " (" + t + ")"
	}
	return v
}
