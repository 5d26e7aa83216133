package gitx

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"

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
	args := append(append([]string(nil), hardened...),
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--upload-pack="+uploadPack, "--", src, refspec)
	_, err = r.Run(ctx, args...)
	return err
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
	for _, p := range []string{setpriv, git} {
		if !plainPath(p) {
			return "", fmt.Errorf("fetch an agent's work: the path %q holds characters a shell would read; install it elsewhere", p)
		}
	}
	uid, gid := strconv.FormatUint(uint64(u.UID), 10), strconv.FormatUint(uint64(u.GID), 10)
	return setpriv + " --reuid=" + uid + " --regid=" + gid + " --clear-groups " + git + " upload-pack", nil
}

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
