package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
	"github.com/spf13/cobra"
)

const starterConfig = `# agenttree pipeline: issues move through these stages in order.
# An agent runs ` + "`agenttree next`" + ` when it believes a stage is done; the
# gates under pre_completion must pass first. See ` + "`agenttree graph`" + `.
project: %s
default_branch: main
forge: local

stages:
  - name: backlog
    parking_lot: true
  - name: implement
    substages:
      - name: code
        pre_completion:
          - has_commits:
      - name: feedback
        pre_completion:
          - file_exists: review.md
          - section_check: {file: review.md, section: Critical Issues, expect: empty}
  - name: implementation_review
    human_review: true
  - name: accepted
    terminal: completion
  - name: not_doing
    terminal: abandon
    redirect_only: true
`

func (a *app) initCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter .agenttree.yaml and create _agenttree/",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			path := filepath.Join(abs, stages.FileName)
			if _, err := os.Stat(path); err == nil && !force {
				return fmt.Errorf("%s already exists; edit it, or pass --force to overwrite it", path)
			}
			text := fmt.Sprintf(starterConfig, issues.Slugify(filepath.Base(abs)))
			if _, err := load.Parse(path, []byte(text), hookRegistry()); err != nil {
				return fmt.Errorf("starter config does not validate: %w", err)
			}
			if err := os.MkdirAll(filepath.Join(abs, "_agenttree", "issues"), 0o755); err != nil {
				return err
			}
			if err := atomicfile.Write(path, []byte(text), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "wrote %s and %s\nnext: agenttree issue create \"My first issue\"\n", path, filepath.Join(abs, "_agenttree"))
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing .agenttree.yaml")
	return cmd
}
