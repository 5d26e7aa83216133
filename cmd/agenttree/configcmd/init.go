package configcmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/docs/skills"
	"github.com/agenttree/agenttree/examples"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// SchemaLine is the first line of a config init writes: editors with the
// YAML language server complete and check the file against the schema.
const SchemaLine = "# yaml-language-server: $schema=https://raw.githubusercontent.com/agenttree/agenttree/main/docs/agenttree.schema.json\n"

// skillsDir is where a repository keeps its instructions, relative to the
// config: the engine reads ci-failure.md, ci-stalled.md and merge-conflict.md there, and
// the starter's stages name theirs.
const skillsDir = "_agenttree/skills"

// starterHead and starterBody are the starter pipeline around its
// `project:` line: the reference pipeline (docs/ARCHITECTURE.md §1), each stage's
// instructions in skillsDir.
const starterHead = SchemaLine + `#
# agenttree's pipeline for this repository, written by ` + "`agenttree init`" + `.
# Issues move through the stages below in order. Whoever acts at a stage (an
# agent, the host controller, or a person) runs ` + "`agenttree next`" + ` when it is done;
# the gates under pre_completion must pass first, and each failing one is
# listed. ` + "`agenttree validate`" + ` checks this file; ` + "`agenttree graph`" + ` draws the
# moves, a person's reject included.
`

const starterBody = `default_branch: main
# Where pull requests and CI live. github: PRs and Actions on GitHub, with
# the auth of ` + "`gh`" + ` (GH_TOKEN, or ` + "`gh auth login`" + `). local: PRs on a bare
# repository ` + "`origin`" + `, CI is ci.command run in a clean checkout; offline.
forge: github
# ci:
#   command: make test       # forge: local only
ci_polling:
  max_retries: 5             # CI failures sent back to the agent before a person is called
# The agents ` + "`agenttree start ID`" + ` runs, each in a tmux session in the issue's
# worktree (worktrees: {dir: ../{{project}}-worktrees}), and the roles that
# use them: the first is started, the next takes over when one keeps failing.
# They run as you unless sandbox: says otherwise (user:NAME, docker:IMAGE).
agents:
  claude: {command: claude, resume_command: claude --continue}
  codex: {command: codex}
roles:
  developer: {agents: [claude, codex], max_restarts: 2, stall_after_s: 900}

stages:
  # Parked: a person starts an issue with ` + "`agenttree next -i ID`" + `.
  - name: backlog
    parking_lot: true
    skill: _agenttree/skills/backlog.md
  # The developer agent writes the change, then reviews it itself.
  - name: implement
    substages:
      - name: code
        skill: _agenttree/skills/implement-code.md
        pre_completion:
          - has_commits:         # the branch has commits beyond default_branch
      - name: feedback
        skill: _agenttree/skills/implement-feedback.md
        pre_completion:
          - file_exists: review.md
          - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail: code}
          - section_check: {file: review.md, section: Checklist, expect: all_checked}
  # The host controller (` + "`agenttree controller`" + `) opens the PR, waits for CI
  # and checks for conflicts. A failure steps the issue back to the agent,
  # with what went wrong typed into its session (_agenttree/skills/ci-failure.md,
  # merge-conflict.md say what to do about it).
  - name: pr_ready
    host: controller
    skill: _agenttree/skills/pr-ready.md
    post_start:
      - create_pr:
      - wait_for_ci:
      - check_conflicts: {auto_rebase: true, on_conflict: step_back}
    pre_completion:
      - pr_ci_passed:
      - pr_mergeable:
    on_failure:
      step_back_to: implement.feedback
      message: "{{failure_reason}}"
  # A person reviews the PR: ` + "`agenttree approve ID`" + ` or ` + "`agenttree reject ID`" + `.
  - name: implementation_review
    human_review: true
    skill: _agenttree/skills/implementation-review.md
    pre_completion:
      - pr_approved:
  # Done: the PR is merged on arrival.
  - name: accepted
    terminal: completion
    post_start:
      - merge_pr:
  # Dropped: reached only with ` + "`agenttree move ID not_doing --reason ...`" + ` or ` + "`agenttree abort ID --reason TEXT`" + `;
  # its PR, if it has one, is closed.
  - name: not_doing
    terminal: abandon
    redirect_only: true
    post_start:
      # A failure to close it goes to a person, never back to the agent.
      - close_pr: {on_failure: escalate}
`

// starterSkills are the instructions the starter's stages name; with the
// failure instructions they are what init writes into skillsDir.
var starterSkills = []string{"backlog.md", "implement-code.md", "implement-feedback.md", "pr-ready.md", "implementation-review.md"}

// InitOptions is what `init` was asked.
type InitOptions struct {
	*cmdutil.App
	// Dir is the repository's directory as given, "" for the working
	// directory; a relative one is from there.
	Dir      string
	Template string
	Force    bool
}

func newCmdInit(a *cmdutil.App, runF func(context.Context, *InitOptions) error) *cobra.Command {
	opts := &InitOptions{App: a}
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Set up agenttree in a git repository: a starter .agenttree.yaml, its instructions, .gitignore lines",
		Long: "Set up agenttree in the git repository at DIR (default: here), asking nothing. It writes\n" +
			".agenttree.yaml with the reference pipeline (code, self-review, PR and CI by the controller,\n" +
			"a person's review, merge), or with --template the example NAME; the stages' instructions in\n" +
			"_agenttree/skills/, which you edit and commit; and the .gitignore lines that keep the rest of\n" +
			"_agenttree/ (issue state, the controller's files) out of git. An existing .agenttree.yaml is\n" +
			"never replaced without --force, and instructions already there are kept.\n\n" +
			"Templates: " + strings.Join(examples.Names(), ", ") + ".",
		Example: "  agenttree init\n  agenttree init --template review-loop\n  agenttree init ../shop",
		Args:    cmdutil.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return initRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing .agenttree.yaml")
	cmd.Flags().StringVar(&opts.Template, "template", "", "write example NAME instead of the starter ("+strings.Join(examples.Names(), ", ")+")")
	return cmd
}

func initRun(ctx context.Context, opts *InitOptions) error {
	a := cmds{opts.App}
	dir := a.WD
	if opts.Dir != "" {
		dir = opts.Dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(a.WD, dir)
		}
	}
	s, err := a.scaffold(ctx, filepath.Clean(dir), opts.Template, opts.Force)
	if err != nil {
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	done, err := s.write()
	if err != nil {
		return err
	}
	cfg, err := load.File(s.config(), cmdutil.HookRegistry())
	if err != nil {
		done.undo()
		return fmt.Errorf("the config init writes does not load, so nothing was written (a bug in agenttree; please report it): %w", err)
	}
	a.printInit(s, done, cfg)
	return nil
}

// scaffold works out what init writes in dir, refusing what it must not
// do: a dir outside a git work tree, an unknown template, a config there
// already (unless force). It writes nothing.
func (a cmds) scaffold(ctx context.Context, dir, template string, force bool) (*scaffold, error) {
	if err := requireWorkTree(ctx, dir); err != nil {
		return nil, err
	}
	config, what, err := configText(ctx, dir, template)
	if err != nil {
		return nil, err
	}
	s := &scaffold{dir: dir, what: what}
	if exists(s.config()) && !force {
		return nil, fmt.Errorf("%s already exists, and init does not replace it: edit it (`agenttree validate` checks it), "+
			"or run `agenttree init --force` to replace it with the starter (`--template NAME` for an example)", s.config())
	}
	names := []string{skills.CIFailure, skills.CIStalled, skills.MergeConflict}
	if template == "" {
		names = slices.Concat(starterSkills, names)
	}
	for _, name := range names {
		data, err := skills.Read(name)
		if err != nil {
			return nil, fmt.Errorf("default instructions %s: %w", name, err)
		}
		s.add(path.Join(skillsDir, name), data, false)
	}
	// The config is the last file written: a repository with it is set up.
	s.add(stages.FileName, config, true)
	return s, nil
}

// requireWorkTree refuses a dir outside a git work tree: issues live on
// branches, and the pipeline's gates read git.
func requireWorkTree(ctx context.Context, dir string) error {
	if !isDir(dir) {
		return fmt.Errorf("%s is not a directory: create it and run `git init` there, then `agenttree init` again", dir)
	}
	out, err := (&gitx.Repo{Dir: dir}).Run(ctx, "rev-parse", "--is-inside-work-tree")
	switch {
	case errors.Is(err, gitx.ErrNotRepository), err == nil && strings.TrimSpace(out) != "true":
		return fmt.Errorf("%s is not in a git work tree, and agenttree keeps each issue on a git branch: "+
			"run `git init` there first (or clone your repository), then `agenttree init` again", dir)
	case err != nil:
		return fmt.Errorf("checking that %s is in a git repository: %w", dir, err)
	}
	return nil
}

// configText is the config init writes in dir, and what it is, in words:
// the starter or an example, with dir's project name and default branch.
func configText(ctx context.Context, dir, template string) (data []byte, what string, err error) {
	facts := readRepo(ctx, dir)
	if template != "" {
		data, err := examples.Config(template)
		if err != nil {
			return nil, "", err
		}
		return tailor(data, facts), "the " + template + " example", nil
	}
	return tailor([]byte(starterHead+"project: myapp\n"+starterBody), facts), "the reference pipeline", nil
}

// printInit says what init wrote and what to run next.
func (a cmds) printInit(s *scaffold, done *written, cfg *stages.Config) {
	out := a.Out
	if flow, err := cfg.Flow(""); err == nil {
		fmt.Fprintf(out, "wrote %s: %s (%s)\n", s.config(), s.what, strings.Join(mainPath(flow), " → "))
	}
	if len(done.skills) > 0 {
		fmt.Fprintf(out, "wrote %s/: %s — what agents and people are told; edit them, and commit them\n", skillsDir, strings.Join(done.skills, ", "))
	}
	if len(done.kept) > 0 {
		fmt.Fprintf(out, "kept %s/: %s (already there)\n", skillsDir, strings.Join(done.kept, ", "))
	}
	if len(done.ignored) > 0 {
		fmt.Fprintf(out, "added to .gitignore: %s — issue state and the controller's files stay out of git\n", strings.Join(done.ignored, " "))
	} else {
		fmt.Fprintln(out, ".gitignore already keeps _agenttree/'s state out of git")
	}
	if done.hidesSkills != "" {
		fmt.Fprintf(out, "note: .gitignore's line %q ignores all of _agenttree/, so git cannot see %s/: replace it with %q and %q to commit the instructions\n",
			done.hidesSkills, skillsDir, ignoreLines[0], ignoreLines[1])
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(out, "note: %s\n", w)
	}
	fmt.Fprintf(out, "next:\n  agenttree validate\n  git add %s .gitignore %s && git commit -m \"agenttree pipeline\"\n  agenttree issue create \"My first issue\"\n",
		stages.FileName, skillsDir)
	if cfg.Forge == "github" {
		fmt.Fprintln(out, "  (forge: github uses the auth of `gh`; set `forge: local` to try it offline against a bare origin)")
	}
}

// mainPath is the way an issue goes through flow when nothing sends it
// elsewhere: the stages `next` visits.
func mainPath(flow *stages.Flow) []string {
	var out []string
	for _, n := range flow.Nodes {
		if !n.RedirectOnly() {
			out = append(out, n.Path)
		}
	}
	return out
}

// ignoreLines keep _agenttree/ out of git but for its instructions: issue
// state, events and the controller's files belong to this machine (and
// agents must not bring theirs in on a branch); the skills are the team's.
var ignoreLines = []string{"/_agenttree/*", "!/_agenttree/skills/"}

// IgnoreComment heads the lines init adds to .gitignore.
const IgnoreComment = "# agenttree: issue state and the controller's files stay on this machine;\n# the stages' instructions in _agenttree/skills/ are committed.\n"

// scaffold is what init writes in dir: the config and the instructions,
// by path relative to dir, and the .gitignore lines.
type scaffold struct {
	dir, what string
	files     []scaffoldFile
}

type scaffoldFile struct {
	rel  string
	data []byte
	// replace: the file is written over one already there (the config,
	// with --force); else one already there is kept.
	replace bool
}

func (s *scaffold) config() string { return filepath.Join(s.dir, stages.FileName) }

func (s *scaffold) add(rel string, data []byte, replace bool) {
	s.files = append(s.files, scaffoldFile{rel: rel, data: data, replace: replace})
}

// written is what a scaffold wrote, and how to take it back.
type written struct {
	// skills and kept are the instructions written and those already
	// there; ignored the lines added to .gitignore; hidesSkills a line
	// already there that ignores all of _agenttree/.
	skills, kept, ignored []string
	hidesSkills           string
	undos                 []func()
}

// undo takes back what was written, latest first.
func (w *written) undo() {
	for i := len(w.undos) - 1; i >= 0; i-- {
		w.undos[i]()
	}
}

// write writes the scaffold in order, .gitignore first, each file
// atomically. On an error it takes back what it wrote, so nothing is left
// half done.
func (s *scaffold) write() (*written, error) {
	w := &written{}
	if err := s.writeIgnore(w); err != nil {
		w.undo()
		return nil, err
	}
	for _, f := range s.files {
		if err := s.writeFile(w, f); err != nil {
			w.undo()
			return nil, err
		}
	}
	return w, nil
}

// writeFile writes f, or keeps the file there when f may not replace it.
func (s *scaffold) writeFile(w *written, f scaffoldFile) error {
	p := filepath.Join(s.dir, filepath.FromSlash(f.rel))
	old, err := os.ReadFile(p)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	isSkill := strings.HasPrefix(f.rel, skillsDir+"/")
	if existed && !f.replace {
		w.kept = append(w.kept, path.Base(f.rel))
		return nil
	}
	if err := mkdirAll(w, filepath.Dir(p)); err != nil {
		return err
	}
	if err := atomicfile.Write(p, f.data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if existed {
		w.undos = append(w.undos, func() { _ = atomicfile.Write(p, old, 0o644) })
	} else {
		w.undos = append(w.undos, func() { _ = os.Remove(p) })
	}
	if isSkill {
		w.skills = append(w.skills, path.Base(f.rel))
	}
	return nil
}

// writeIgnore adds the ignoreLines .gitignore lacks, under a comment.
func (s *scaffold) writeIgnore(w *written) error {
	p := filepath.Join(s.dir, ".gitignore")
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(old), "\n") {
		line = strings.TrimSpace(line)
		have[line] = true
		switch line {
		case "_agenttree", "_agenttree/", "/_agenttree", "/_agenttree/":
			w.hidesSkills = line
		}
	}
	for _, line := range ignoreLines {
		if !have[line] {
			w.ignored = append(w.ignored, line)
		}
	}
	if len(w.ignored) == 0 {
		return nil
	}
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text != "" {
		text += "\n"
	}
	text += IgnoreComment + strings.Join(w.ignored, "\n") + "\n"
	if err := atomicfile.Write(p, []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if old == nil {
		w.undos = append(w.undos, func() { _ = os.Remove(p) })
	} else {
		w.undos = append(w.undos, func() { _ = atomicfile.Write(p, old, 0o644) })
	}
	return nil
}

// mkdirAll makes dir and its missing parents, each taken back by w's undo
// (when left empty).
func mkdirAll(w *written, dir string) error {
	var missing []string
	for d := dir; !exists(d); d = filepath.Dir(d) {
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
		w.undos = append(w.undos, func() { _ = os.Remove(d) })
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
