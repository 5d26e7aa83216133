package trustcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
)

// Who may write the state, and the repository's git data, is what the
// enforced deployments stand on (docs/SECURITY.md): whoever may write a
// directory may rename what is in it and put their own in its place.

const (
	checkAbove = "directories above the state directory"
	checkState = "state directory written by the host only"
	checkHost  = "host files written by the host only"
	checkGit   = "git data written by the host only"
	// listed is how many directories of one tree are findings of their
	// own; the rest are counted in one more.
	listed = 10
)

// What an agent that may write there could do.
const (
	aboveHarm = "whoever may write it can rename what is in it and put their own in its place: the repository, " +
		"its state directory and .git"
	rootHarm = "an agent that may write it can move host/ aside and plant a state directory of the first layout, " +
		"or its own issues/ or run/"
	issuesHarm = "an agent that may write it can rename or replace the issues' document directories, or plant new ones"
	runHarm    = "an agent that may write it can put a socket of its own where agents look for the controller's"
	hostHarm   = "an agent that may write it can write or replace the host's files there: issues' stages and history, " +
		"approvals, CI results, session tokens"
	gitHarm = "an agent that may write it can rewrite branches and objects, or write hooks and config that run code " +
		"as whoever runs git there next"
)

// permissionFindings checks who may write each directory on the way to
// the host's files, the host's files, and the repository's .git.
func permissionFindings(l statedir.Layout, host int) []finding {
	found := aboveFindings(l.Root, host)
	found = append(found, stateFindings(l, host)...)
	found = append(found, hostFindings(l, host)...)
	return append(found, gitFindings(filepath.Dir(l.Root), host)...)
}

// realDir is dir with its symbolic links resolved, or the nearest
// directory above it that exists.
func realDir(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			rel, _ := filepath.Rel(d, dir)
			return filepath.Join(real, rel)
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// aboveFindings checks every directory above the state directory, from /
// down (statedir.ExposedAncestor): one that others may write, or another
// user's, is a finding; a sticky one (as /tmp) root's or the host's is
// not, as others cannot rename or remove what is the host's in it.
func aboveFindings(stateDir string, host int) []finding {
	var found, notes []string
	var out []finding
	for _, dir := range statedir.Ancestors(realDir(stateDir)) {
		fi, err := os.Stat(dir)
		if err != nil {
			continue // not made yet
		}
		why := statedir.ExposedAncestor(fi, host)
		if why == "" {
			if statedir.Sticky(fi) && fi.Mode().Perm()&0o022 != 0 {
				notes = append(notes, dir+" may be written by others, but it is sticky and owned by "+ownerName(fi)+
					": they may make new names in it, not rename or remove what is the host's")
			}
			continue
		}
		found = append(found, dir)
		out = append(out, finding{Check: checkAbove, Path: dir, Detail: dir + ": " + why + "; " + aboveHarm, Fix: fixOf(fi, dir, host, false)})
	}
	if len(found) == 0 {
		detail := "only root or the state directory's owner may write them"
		if len(notes) > 0 {
			detail += "; " + strings.Join(notes, "; ")
		}
		out = append(out, finding{Check: checkAbove, OK: true, Detail: detail})
	}
	return out
}

// stateFindings checks the state directory itself and the directories
// in it that lead to what agents may use: issues/ (not the documents'
// directories in it, which agents write) and run/.
func stateFindings(l statedir.Layout, host int) []finding {
	var out []finding
	for _, d := range []struct{ path, harm string }{
		{l.Root, rootHarm},
		{filepath.Join(l.Root, "issues"), issuesHarm},
		{filepath.Dir(l.Socket()), runHarm},
	} {
		fi, err := os.Lstat(d.path)
		if err != nil {
			continue // not made yet
		}
		if why := statedir.Exposed(fi, host, d.path != l.Root); why != "" {
			out = append(out, finding{Check: checkState, Path: d.path, Detail: d.path + ": " + why + "; " + d.harm, Fix: fixOf(fi, d.path, host, true)})
		}
	}
	if len(out) == 0 {
		out = append(out, finding{Check: checkState, OK: true, Detail: l.Root + ", its issues/ and run/: only its owner (or root) may write them"})
	}
	return out
}

// hostFindings checks host/ and everything in it: a directory others may
// write, or another user's, is a finding; a file others may write too
// (the agents' token files are theirs, readable by them alone).
func hostFindings(l statedir.Layout, host int) []finding {
	out, files, err := treeFindings(l.Host(), host, checkHost, hostHarm, nil)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []finding{{Check: checkHost, OK: true, Detail: l.Host() + " does not exist yet (made with the first issue)"}}
	case err != nil:
		return []finding{{Check: checkHost, Detail: err.Error(), Fix: "check that you may read " + l.Host()}}
	}
	if len(files) > 0 {
		out = append(out, finding{Check: checkHost, Path: files[0],
			Detail: fmt.Sprintf("%s in %s others may write, first %s; %s", countFiles(len(files)), l.Host(), files[0], hostHarm),
			Fix:    "chmod -R g-w,o-w " + l.Host() + " (`agenttree doctor --fix` does)"})
	}
	if len(out) == 0 {
		out = append(out, finding{Check: checkHost, OK: true, Detail: l.Host() + ": no file or directory others can write"})
	}
	return out
}

// treeFindings walks root: each directory another user owns, or others
// may write, is a finding (the first `listed` of them, then one that
// counts the rest); files holds the files others may write (their owner
// is not checked: the directory says who put them there). only, if not
// nil, says which directories under root to walk.
func treeFindings(root string, host int, check, harm string, only func(rel string) bool) (out []finding, files []string, err error) {
	var more int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != root && errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if only != nil && d.IsDir() && path != root && !only(rel) {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		if fi.Mode().IsRegular() {
			if _, _, ok := identity.FileOwner(fi); ok && fi.Mode().Perm()&0o022 != 0 {
				files = append(files, path)
			}
			return nil
		}
		why := statedir.Exposed(fi, host, true)
		switch {
		case why == "":
		case len(out) < listed:
			out = append(out, finding{Check: check, Path: path, Detail: path + ": " + why + "; " + harm, Fix: fixOf(fi, path, host, true)})
		default:
			more++
		}
		return nil
	})
	if more > 0 {
		out = append(out, finding{Check: check, Path: root, Detail: fmt.Sprintf("and %d more under %s like those", more, root),
			Fix: "chmod -R g-w,o-w " + root + " (`agenttree doctor --fix` does)"})
	}
	return out, files, err
}

// fixOf says how to make path, which others may write, the host's alone.
// within: path is in the state directory or .git, where `doctor --fix`
// changes what the host or root owns; above it, only what the host owns.
func fixOf(fi fs.FileInfo, path string, host int, within bool) string {
	uid, _, _ := identity.FileOwner(fi)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "agenttree never makes a symbolic link there: check where it leads, then remove it"
	case uid == host || (within && uid == 0):
		return "chmod g-w,o-w " + path + " (`agenttree doctor --fix` does)"
	case fi.Mode().Perm()&0o022 == 0:
		return fmt.Sprintf("it is owned by %s, who may rename what is in it: check what it holds, and make it yours (chown) or move the repository "+
			"under directories only you and root own; `agenttree doctor --fix` leaves alone what is not yours", ownerName(fi))
	}
	return fmt.Sprintf("it is not yours (owned by %s), and `agenttree doctor --fix` leaves it alone: ask its owner to make it writable by them "+
		"alone (chmod g-w,o-w %s), or move the repository under directories only you and root may write", ownerName(fi), path)
}

func ownerName(fi fs.FileInfo) string {
	uid, _, _ := identity.FileOwner(fi)
	return statedir.UserName(uid)
}

// gitDir is the repository's git directory (its common one, for a linked
// worktree), or "" when repo has none.
func gitDir(repo string) string {
	dot := filepath.Join(repo, ".git")
	fi, err := os.Stat(dot)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dot
	}
	data, err := os.ReadFile(dot)
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repo, dir)
	}
	if common, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(dir, c)
		}
		return filepath.Clean(c)
	}
	return dir
}

// gitParts are what doctor checks of a git directory: the directory, its
// objects/, refs/ and hooks/ trees, and its files that say what git runs
// or where branches point.
var (
	gitTrees = []string{"objects", "refs", "hooks"}
	gitFiles = []string{"config", "HEAD", "packed-refs"}
)

// gitFindings checks the repository's .git: the directory, its objects/,
// refs/ and hooks/ trees, and its config, HEAD and packed-refs.
func gitFindings(repo string, host int) []finding {
	dir := gitDir(repo)
	if dir == "" {
		return nil
	}
	inTree := func(rel string) bool {
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		return slices.Contains(gitTrees, top)
	}
	out, files, err := treeFindings(dir, host, checkGit, gitHarm, inTree)
	if err != nil {
		return []finding{{Check: checkGit, Detail: err.Error(), Fix: "check that you may read " + dir}}
	}
	var exposed []string
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		if inTree(rel) || slices.Contains(gitFiles, rel) {
			exposed = append(exposed, f)
		}
	}
	if len(exposed) > 0 {
		fix := "chmod g-w,o-w " + strings.Join(exposed, " ")
		if len(exposed) > 3 {
			fix = "chmod -R g-w,o-w " + dir
		}
		out = append(out, finding{Check: checkGit, Path: exposed[0],
			Detail: fmt.Sprintf("%s of %s others may write, first %s; %s", countFiles(len(exposed)), dir, exposed[0], gitHarm),
			Fix:    fix + " (`agenttree doctor --fix` does)"})
	}
	if len(out) > 0 && sharedRepository(dir) {
		out[0].Fix += "; and git's core.sharedRepository makes what git writes next group-writable again: " +
			"`git config --unset core.sharedRepository`"
	}
	if len(out) == 0 {
		out = append(out, finding{Check: checkGit, OK: true, Detail: dir + ": only the state directory's owner (or root) may write it, its objects, refs, hooks and config"})
	}
	return out
}

// sharedRepository says whether the git directory's config sets
// core.sharedRepository (to anything but false or umask).
func sharedRepository(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(strings.ToLower(string(data)), "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.TrimSpace(key) == "sharedrepository" {
			v := strings.TrimSpace(value)
			return v != "false" && v != "umask" && v != "0" && v != "no" && v != "off"
		}
	}
	return false
}

// countFiles counts n files for people.
func countFiles(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
