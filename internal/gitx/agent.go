package gitx

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/internal/proc"
)

// hardened are the settings the host's git runs with when it takes in
// what an agent made: no hook and no fsmonitor of anyone's config runs,
// and every object received is checked.
var hardened = []string{
	"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=",
	"-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true",
	"-c", "protocol.file.allow=always",
}

// FetchFromAgent fetches refspec from the repository at src, which OS user
// u owns, into r. git's upload-pack, which reads src's config, runs as u
// (setpriv): nothing of src runs as the host, git needs no safe.directory
// exception for it, and r's own git runs hardened (no hooks, no fsmonitor,
// objects checked). Needs root.
func (r *Repo) FetchFromAgent(ctx context.Context, src string, u proc.User, refspec string) error {
	uploadPack, err := uploadPackAs(u)
	if err != nil {
		return err
	}
	return r.fetchWith(ctx, src, uploadPack, refspec)
}

// FetchUntrusted fetches refspec from the repository at src, which the
// host does not trust (an agent's container writes it), into r, with
// git's upload-pack run by the program uploadPack names (its argv; git
// adds src's path as the last argument). git holds a fetch from an
// untrusted repository over its transport within its security boundary
// (gitsecurityboundary(7): `git clone --no-local` of one is safe):
// nothing of src's config or hooks runs on the fetching side, which runs
// hardened besides (no hooks, no fsmonitor, every object checked). The
// serving side is another matter. An upload-pack the host ran would
// read src as the host, following whatever src points at on the host's
// filesystem (objects/info/alternates, a `.git` file, symlinked refs),
// and serve as src's the history of any repository the host can read.
// So uploadPack must run where src can reach nothing of the host's: the
// agent's own sandbox (docs/SECURITY.md, "Agents in containers").
func (r *Repo) FetchUntrusted(ctx context.Context, src string, uploadPack []string, refspec string) error {
	if len(uploadPack) == 0 {
		return fmt.Errorf("fetch from %s: no upload-pack to serve it", src)
	}
	quoted := make([]string, len(uploadPack))
	for i, arg := range uploadPack {
		quoted[i] = shellQuote(arg)
	}
	return r.fetchWith(ctx, src, strings.Join(quoted, " "), refspec)
}

// fetchWith fetches refspec from src into r, hardened, with uploadPack
// (shell text) serving it.
func (r *Repo) fetchWith(ctx context.Context, src, uploadPack, refspec string) error {
	args := append(append([]string(nil), hardened...),
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--upload-pack="+uploadPack, "--", src, refspec)
	_, err := r.Run(ctx, args...)
	return err
}

// ParseStatus is the paths `git status --porcelain -z` names in out, as
// Changes gives them: for what a sandbox's git said of a repository the
// host runs no git in.
func ParseStatus(out string) []string { return parseStatus(out) }

// shellQuote is s as one word of sh: single-quoted unless it is plain.
func shellQuote(s string) string {
	plain := s != ""
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("/._-:,+@", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// uploadPackAs is the command git runs (through sh) to serve a fetch as
// u: setpriv with u's ids, then git's upload-pack by absolute path. Only
// numbers and a path checked to hold nothing the shell reads go into it.
func uploadPackAs(u proc.User) (string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return "", fmt.Errorf("fetch an agent's work as %s needs setpriv (util-linux): %w", u.Name, err)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return "", err
	}
	env, err := exec.LookPath("env")
	if err != nil {
		return "", err
	}
	for _, p := range []string{setpriv, git, env} {
		if !plainPath(p) {
			return "", fmt.Errorf("fetch an agent's work: the path %q holds characters a shell would read; install it elsewhere", p)
		}
	}
	uid, gid := strconv.FormatUint(uint64(u.UID), 10), strconv.FormatUint(uint64(u.GID), 10)
	// An empty environment: upload-pack runs as the agent, whose
	// processes read each other's /proc/PID/environ, and the host's git
	// would hand it the controller's (its credentials among them).
	return setpriv + " --reuid=" + uid + " --regid=" + gid + " --clear-groups " + env + " -i " + uploadPackEnv + " " + git + " upload-pack", nil
}

// uploadPackEnv is all the environment upload-pack gets as the agent.
const uploadPackEnv = "HOME=/ PATH=/usr/local/bin:/usr/bin:/bin"

// plainPath reports whether p is an absolute path of letters, digits and
// "/._-" only.
func plainPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for _, c := range p {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
