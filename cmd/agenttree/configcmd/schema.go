package configcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/stages/configref"
)

// SchemaOptions is what `schema` was asked: nothing but where to print.
type SchemaOptions struct{ *cmdutil.App }

func newCmdSchema(a *cmdutil.App, runF func(context.Context, *SchemaOptions) error) *cobra.Command {
	opts := &SchemaOptions{App: a}
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of .agenttree.yaml, for editors",
		Long: "Print the JSON Schema (draft 2020-12) of .agenttree.yaml, generated from the hooks this\n" +
			"build of agenttree has: every hook with its parameters, and both spellings of the\n" +
			"config. Editors with the YAML language server read it from a first line such as\n\n" +
			"  # yaml-language-server: $schema=" + configref.SchemaURL + "\n\n" +
			"or from a file this command wrote. Needs no config.",
		Example: "  # an offline copy; then write `# yaml-language-server: $schema=agenttree.schema.json`\n" +
			"  # as the first line of .agenttree.yaml\n" +
			"  agenttree schema > agenttree.schema.json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return schemaRun(cmd.Context(), opts)
		},
	}
}

func schemaRun(ctx context.Context, opts *SchemaOptions) error {
	data, err := configref.JSONSchema(cmdutil.HookRegistry())
	if err != nil {
		return err
	}
	_, err = opts.Out.Write(data)
	return err
}
