// Package hello is the smallest CLI the floor programs share: a cobra
// root with as many commands as agenttree has, that prints its help.
package hello

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Run runs the CLI on the process's arguments.
func Run() {
	root := &cobra.Command{Use: "hello", Short: "A cobra command with 40 subcommands"}
	for i := range 40 {
		root.AddCommand(&cobra.Command{
			Use:   fmt.Sprintf("command%d", i),
			Short: "One of the subcommands",
			RunE:  func(*cobra.Command, []string) error { return nil },
		})
	}
	root.SetArgs(os.Args[1:])
	if err := root.Execute(); err != nil {
		os.Exit(2)
	}
}
