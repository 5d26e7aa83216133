package migratecmd

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine/issues/transfer"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/stages"
)

// Report is what migrate did, and what the person does next: migrate
// never rewrites the config, nor removes the source.
type Report struct {
	From stages.StateBackend `json:"from"`
	To   stages.StateBackend `json:"to"`
	// Where is the destination, in words.
	Where string `json:"where"`
	*transfer.Result
	// Config is the config file; State the state: block to write in it.
	Config string `json:"config"`
	State  string `json:"state"`
	// RemoveSource is the command that removes the state left at the
	// source, once the config names the destination.
	RemoveSource string `json:"remove_source"`
}

func (e *ends) report(res *transfer.Result) *Report {
	return &Report{From: e.from, To: e.to, Where: e.where(e.to), Result: res, Config: e.cfg.File, State: e.block(), RemoveSource: e.remove(e.from)}
}

// where says where backend b keeps the state.
func (e *ends) where(b stages.StateBackend) string {
	if b == stages.StateEtcd {
		c := cmdutil.EtcdConfig(e.cfg)
		return fmt.Sprintf("etcd at %s under %s", strings.Join(c.Endpoints, ", "), c.Prefix)
	}
	return "files in " + statedir.Layout{Root: e.stateDir}.HostIssues()
}

// block is the state: block that keeps the state at the destination,
// its paths relative to the config file as a person writes them.
func (e *ends) block() string {
	if e.to == stages.StateFiles {
		return "state:\n  backend: files\n"
	}
	c := cmdutil.EtcdConfig(e.cfg)
	var b strings.Builder
	fmt.Fprintf(&b, "state:\n  backend: etcd\n  etcd:\n    endpoints: [%s]\n    prefix: %s\n", strings.Join(c.Endpoints, ", "), c.Prefix)
	var tls []string
	for _, f := range [][2]string{{"ca", c.CA}, {"cert", c.Cert}, {"key", c.Key}} {
		if f[1] != "" {
			tls = append(tls, f[0]+": "+e.rel(f[1]))
		}
	}
	if len(tls) > 0 {
		fmt.Fprintf(&b, "    tls: {%s}\n", strings.Join(tls, ", "))
	}
	return b.String()
}

// rel is path relative to the config file's directory when it is under
// it.
func (e *ends) rel(path string) string {
	if r, err := filepath.Rel(filepath.Dir(e.cfg.File), path); err == nil && filepath.IsLocal(r) {
		return r
	}
	return path
}

// remove is the command that removes the issues' state kept in b, their
// outboxes (copied with it), and nothing else: not the stage documents or
// sessions.
func (e *ends) remove(b stages.StateBackend) string {
	if b == stages.StateEtcd {
		c := cmdutil.EtcdConfig(e.cfg)
		cmd := []string{"etcdctl", "--endpoints=" + strings.Join(c.Endpoints, ",")}
		for _, f := range [][2]string{{"--cacert", c.CA}, {"--cert", c.Cert}, {"--key", c.Key}} {
			if f[1] != "" {
				cmd = append(cmd, f[0]+"="+quote(f[1]))
			}
		}
		return strings.Join(append(cmd, "del", "--prefix", quote(c.Prefix+"/")), " ")
	}
	dir := quote(statedir.Layout{Root: e.stateDir}.HostIssues())
	return fmt.Sprintf(`find %s -mindepth 2 -maxdepth 2 \( -name issue.yaml -o -name watch.yaml -o -name 'events*.jsonl' -o -name outbox \) -exec rm -rf {} + && rm -f %s/.last-id %s/.scan-cache`, dir, dir, dir)
}

// quote is s for a POSIX shell.
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// conflictHint says what to do about a destination holding issues of
// its own.
func (e *ends) conflictHint() string {
	return fmt.Sprintf("migrate never overwrites what someone made at the destination (%s). If those issues are the ones to keep, the state is there already: "+
		"make the config's state: block name %s. If they are to go, remove them with `%s`, then run `agenttree migrate --to %s` again",
		e.where(e.to), e.to, e.remove(e.to), e.to)
}

var words = map[transfer.Action]string{transfer.Copied: "copied", transfer.CaughtUp: "caught up", transfer.Same: "already there"}

func (e *ends) print(a *cmdutil.App, r *Report) {
	count := map[transfer.Action]int{}
	for _, m := range r.Issues {
		count[m.Action]++
		msgs := ""
		switch {
		case m.Messages == 1:
			msgs = "; 1 message of its outbox"
		case m.Messages > 1:
			msgs = fmt.Sprintf("; %d messages of its outbox", m.Messages)
		}
		fmt.Fprintf(a.Out, "issue %d: %s (%d lines, head %s%s)\n", m.ID, words[m.Action], m.Lines, short(m.Hash), msgs)
	}
	fmt.Fprintf(a.Out, "%d issues moved from %s to %s: %d copied, %d caught up, %d already there; last id %d\n",
		len(r.Issues), r.From, r.Where, count[transfer.Copied], count[transfer.CaughtUp], count[transfer.Same], r.LastID)
	bad := 0
	for _, rep := range r.Verified {
		if rep.OK {
			continue
		}
		bad++
		fmt.Fprintf(a.Out, "issue %d: NOT CONSISTENT at the destination\n", rep.ID)
		for _, p := range append(rep.Problems, rep.Changes...) {
			fmt.Fprintf(a.Out, "  %s\n", cmdutil.SafeText(p))
		}
	}
	if bad > 0 {
		fmt.Fprintf(a.Out, "checked at the destination as `agenttree verify` checks: %d of %d not consistent. Run `agenttree verify` here (the config still says %s): "+
			"an issue that is not consistent there either is repaired there first (`agenttree repair ID`), then `agenttree migrate --to %s` again\n", bad, len(r.Verified), r.From, r.To)
		return
	}
	fmt.Fprintf(a.Out, "checked at the destination as `agenttree verify` checks: %d consistent\n\n", len(r.Verified))
	fmt.Fprintf(a.Out, "The config still says %s, and every command reads and writes the state there until it says %s. In %s, write the state: block as\n\n%s\n",
		r.From, r.To, r.Config, indent(r.State))
	fmt.Fprintf(a.Out, "A change made meanwhile is moved by `agenttree migrate --to %s` again.\n", r.To)
	fmt.Fprintf(a.Out, "Nothing was removed from %s. Once the config says %s and `agenttree verify` is content, remove the state left there with\n\n  %s\n", r.From, r.To, r.RemoveSource)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	if hash == "" {
		return "none"
	}
	return hash
}
