package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/stages"
)

type validateReport struct {
	File     string              `json:"file"`
	Valid    bool                `json:"valid"`
	Form     stages.Form         `json:"form,omitempty"`
	Stages   int                 `json:"stages"`
	Flows    []string            `json:"flows"`
	Errors   []stages.Diagnostic `json:"errors"`
	Warnings []stages.Diagnostic `json:"warnings"`
}

func (a *app) validateCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check .agenttree.yaml and report every problem with its file:line:col",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !asJSON {
				cfg, _, err := a.loadConfig()
				if err != nil {
					return err
				}
				fmt.Fprintf(a.out, "%s: ok (%s form, %d stages, flows: %s)\n", cfg.File, cfg.Form, len(cfg.Stages), strings.Join(cfg.FlowNames(), ", "))
				return nil
			}
			rep, err := a.validateReport()
			if err != nil {
				return err
			}
			if err := a.printJSON(rep); err != nil {
				return err
			}
			if !rep.Valid {
				return silentExit(exitUsage)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// validateReport loads the config and reports what was found, problems
// included; err is for a config that could not be read at all.
func (a *app) validateReport() (validateReport, error) {
	rep := validateReport{Errors: []stages.Diagnostic{}, Warnings: []stages.Diagnostic{}, Flows: []string{}}
	quiet := *a
	quiet.err = io.Discard // the warnings go into the report
	cfg, _, err := quiet.loadConfig()
	var le *stages.LoadError
	switch {
	case errors.As(err, &le):
		rep.File = a.configPath
		for _, d := range le.Diagnostics {
			rep.File = d.Pos.File
			if d.Severity == stages.SevError {
				rep.Errors = append(rep.Errors, d)
			} else {
				rep.Warnings = append(rep.Warnings, d)
			}
		}
	case err != nil:
		return rep, err
	default:
		rep.File, rep.Valid, rep.Form, rep.Stages, rep.Flows = cfg.File, true, cfg.Form, len(cfg.Stages), cfg.FlowNames()
		rep.Warnings = append(rep.Warnings, cfg.Warnings...)
	}
	return rep, nil
}

type stagesReport struct {
	DefaultFlow string              `json:"default_flow"`
	Flows       map[string][]string `json:"flows"`
}

func (a *app) stagesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stages",
		Short: "List each flow's stages in order",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := a.loadConfig()
			if err != nil {
				return err
			}
			if asJSON {
				rep := stagesReport{DefaultFlow: cfg.DefaultFlow, Flows: map[string][]string{}}
				for _, f := range cfg.Flows {
					rep.Flows[f.Name] = f.Paths()
				}
				return a.printJSON(rep)
			}
			for _, f := range cfg.Flows {
				mark := ""
				if f.Name == cfg.DefaultFlow {
					mark = " (default)"
				}
				fmt.Fprintf(a.out, "flow %s%s:\n", f.Name, mark)
				for _, n := range f.Nodes {
					fmt.Fprintf(a.out, "  %-32s %s\n", n.Path, describeNode(n))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
