// Package ghrepo finds the GitHub repository agenttree works on: named in
// the configuration, or read from a git remote, on github.com or a GitHub
// Enterprise host gh knows.
package ghrepo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/cli/go-gh/v2/pkg/auth"

	"github.com/agenttree/agenttree/internal/gitx"
)

// Errors Resolve reports about where the repository is.
var (
	// ErrNoRemote: the repository has no remote to read, and no repository
	// was configured.
	ErrNoRemote = errors.New("no git remote")
	// ErrNotGitHub: the remote is not on a GitHub host.
	ErrNotGitHub = errors.New("not a GitHub repository")
)

// Repo names a repository on a GitHub host.
type Repo struct {
	Host  string // github.com, or a GitHub Enterprise host
	Owner string
	Name  string
}

// String is host/owner/name.
func (r Repo) String() string { return r.Host + "/" + r.Owner + "/" + r.Name }

// FullName is owner/name.
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// Lookup says where the repository is named.
type Lookup struct {
	// Repo is "owner/name", "host/owner/name" or a URL. Empty means: read
	// the remote.
	Repo string
	// Host overrides the host from Repo or the remote, e.g. when origin
	// uses an ssh alias. Default: the remote's host, or gh's default host
	// for owner/name.
	Host string
	// Dir is the git repository whose remote to read (default: the
	// working directory).
	Dir string
	// Remote is the remote to read (default "origin").
	Remote string
}

// Resolve finds the repository, and checks that its host is GitHub.
func Resolve(ctx context.Context, l Lookup) (Repo, error) {
	repo, remote, err := l.find(ctx)
	if err != nil {
		return Repo{}, err
	}
	if l.Host != "" {
		repo.Host = normalizeHost(l.Host)
	}
	return repo, checkHost(repo, l.Host, remote)
}

// find reads the repository from Repo, else from the remote, which it
// names ("" for Repo).
func (l Lookup) find(ctx context.Context) (Repo, string, error) {
	if l.Repo != "" {
		host := l.Host
		if host == "" {
			host, _ = auth.DefaultHost()
		}
		repo, err := ParseRepo(l.Repo, host)
		return repo, "", err
	}
	remote := cmp.Or(l.Remote, gitx.DefaultRemote)
	repo, err := RemoteRepo(ctx, l.Dir, remote)
	return repo, remote, err
}

// ParseRemoteURL reads a git remote URL: https://host/o/r(.git),
// git@host:o/r(.git), ssh://[user@]host[:port]/o/r(.git), git://, and
// git+ssh://. It does not judge whether the host is GitHub.
func ParseRemoteURL(raw string) (Repo, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Repo{}, fmt.Errorf("empty remote URL")
	}
	var host, path string
	switch {
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		if err != nil {
			return Repo{}, fmt.Errorf("remote URL %q: %w", s, err)
		}
		switch u.Scheme {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
		case "file":
			return Repo{}, localRemote(s)
		default:
			return Repo{}, fmt.Errorf("remote URL %q: unsupported scheme %q", s, u.Scheme)
		}
		host, path = u.Hostname(), u.Path
	case looksLocal(s):
		return Repo{}, localRemote(s)
	default:
		// scp-like: [user@]host:owner/repo
		at := strings.LastIndex(s[:max(strings.Index(s, ":"), 0)], "@")
		hostPath := s[at+1:]
		h, p, ok := strings.Cut(hostPath, ":")
		if !ok {
			return Repo{}, fmt.Errorf("remote URL %q: not a URL or user@host:owner/repo", s)
		}
		host, path = h, p
	}
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	parts := strings.Split(path, "/")
	if host == "" || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return Repo{}, fmt.Errorf("remote URL %q does not name host/owner/repo", s)
	}
	return Repo{Host: normalizeHost(host), Owner: parts[0], Name: parts[1]}, nil
}

// localRemote is the error for a remote on this machine, which only the
// local forge can serve. url is trimmed: git's output ends in a newline
// that would otherwise show up quoted in the message.
func localRemote(url string) error {
	return fmt.Errorf("%w: remote %q is a local path; for a bare repository on this machine use `forge: local`", ErrNotGitHub, url)
}

func looksLocal(s string) bool {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~") {
		return true
	}
	// git treats "a:b" as scp-like only when no slash precedes the colon.
	colon := strings.Index(s, ":")
	slash := strings.Index(s, "/")
	return colon < 0 || (slash >= 0 && slash < colon)
}

// normalizeHost maps ssh.github.com, www.github.com and api.github.com to
// github.com, and lower-cases the rest.
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if n := auth.NormalizeHostname(h); n == "github.com" {
		return n
	}
	return h
}

// ParseRepo reads a configured repository: "owner/name", "host/owner/name"
// or a remote URL. defaultHost is used for the short form.
func ParseRepo(s, defaultHost string) (Repo, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") || (strings.Contains(s, ":") && !looksLocal(s)) {
		return ParseRemoteURL(s)
	}
	parts := strings.Split(strings.TrimSuffix(strings.Trim(s, "/"), ".git"), "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return Repo{Host: normalizeHost(defaultHost), Owner: parts[0], Name: parts[1]}, nil
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return Repo{Host: normalizeHost(parts[0]), Owner: parts[1], Name: parts[2]}, nil
	}
	return Repo{}, fmt.Errorf("repository %q: want owner/name or host/owner/name", s)
}

// configHint is how a user names the repository in .agenttree.yaml when
// the remote cannot.
const configHint = "name the repository in .agenttree.yaml (`github: {repo: owner/name}`)"

// RemoteRepo reads the URL of a git remote in dir (with git's insteadOf
// rewrites applied) and parses it.
func RemoteRepo(ctx context.Context, dir, remote string) (Repo, error) {
	remote = cmp.Or(remote, gitx.DefaultRemote)
	raw, err := (&gitx.Repo{Dir: dir}).RemoteURL(ctx, remote)
	if err != nil {
		where := dir
		if where == "" {
			where, _ = os.Getwd()
		}
		switch {
		case errors.Is(err, gitx.ErrNoRemote):
			return Repo{}, fmt.Errorf("%w: the repository in %s has no %q remote; add one with `git remote add %s <url>`, or %s",
				ErrNoRemote, where, remote, remote, configHint)
		case errors.Is(err, gitx.ErrNotRepository):
			return Repo{}, fmt.Errorf("%w: %s is not a git repository; run agenttree inside one, or %s",
				ErrNoRemote, where, configHint)
		}
		return Repo{}, fmt.Errorf("reading the %q remote in %s: %w", remote, where, err)
	}
	r, err := ParseRemoteURL(raw)
	if err != nil {
		return Repo{}, fmt.Errorf("the %q remote: %w", remote, err)
	}
	return r, nil
}

// Hosts that are certainly not GitHub, for a clear error instead of a
// confusing 404 from an API that is not there.
var notGitHubHosts = []string{"gitlab.com", "bitbucket.org", "codeberg.org", "dev.azure.com",
	"ssh.dev.azure.com", "visualstudio.com", "sr.ht", "gitea.com", "sourceforge.net"}

func certainlyNotGitHub(host string) bool {
	for _, h := range notGitHubHosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return true
		}
	}
	return strings.Contains(host, "gitlab") || strings.Contains(host, "bitbucket")
}

// checkHost accepts github.com, GHE.com tenancies, and any Enterprise
// host gh knows (logged in, GH_HOST, or an enterprise token in the
// environment) or the caller named explicitly.
func checkHost(r Repo, explicitHost, remote string) error {
	what := "the repository " + r.String()
	if remote != "" {
		what = remote + " is " + r.String()
	}
	if certainlyNotGitHub(r.Host) {
		return fmt.Errorf("%w: %s; agenttree's github forge needs a GitHub remote, or use `forge: local`", ErrNotGitHub, what)
	}
	h := r.Host
	if h == "github.com" || h == "github.localhost" || auth.IsTenancy(h) || strings.EqualFold(h, explicitHost) ||
		strings.EqualFold(h, os.Getenv("GH_HOST")) {
		return nil
	}
	for _, k := range auth.KnownHosts() {
		if strings.EqualFold(k, h) {
			return nil
		}
	}
	if os.Getenv("GH_ENTERPRISE_TOKEN") != "" || os.Getenv("GITHUB_ENTERPRISE_TOKEN") != "" {
		return nil
	}
	return fmt.Errorf("%w: %s, and %s is not a GitHub host gh knows; if it is GitHub Enterprise, run `gh auth login --hostname %s` or set GH_ENTERPRISE_TOKEN; otherwise use `forge: local`",
		ErrNotGitHub, what, h, h)
}
