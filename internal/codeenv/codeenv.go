// Package codeenv is the environment the repository's code runs with
// when agenttree starts it on the host: the local forge's CI command and
// `run` gates. That code comes from the agents' commits, so whatever is
// in its environment every agent can read (a commit that prints it is
// enough). It gets an allowlist, never agenttree's own environment,
// which holds the person's credentials (GH_TOKEN, SSH_AUTH_SOCK, cloud
// keys): see docs/SECURITY.md.
//
// The package also says which names a config may list for that code
// (CheckName) and which of them look like credentials (LooksSecret), for
// the loader's errors and warnings.
package codeenv

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// Own is the prefix of agenttree's own variables. The code gets those
// agenttree sets for it (the values, CI's commit), never this
// process's: they are the controller's settings and a session's token.
const Own = "AGENTTREE_"

// base are the names every program expects and no credential is
// kept in; HOME, USER and LOGNAME are replaced by the sandbox user's
// where the code runs as one (proc.AsUser).
var base = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR", "TZ"}

// windowsBase are what a Windows program cannot start without (SystemRoot
// for its DLLs, ComSpec and PATHEXT for a shell), and where it keeps its
// temporary and per-user files.
var windowsBase = []string{
	"SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT", "TEMP", "TMP",
	"USERPROFILE", "USERNAME", "APPDATA", "LOCALAPPDATA", "ProgramData", "ProgramFiles", "ProgramFiles(x86)",
	"ProgramW6432", "CommonProgramFiles", "CommonProgramFiles(x86)", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS",
}

// Environ is the environment of the repository's code: of environ (this
// process's, as os.Environ gives it), only the variables every program
// needs (PATH, HOME, USER, LOGNAME, LANG, LC_*, TERM, TMPDIR, TZ; on
// Windows also those it cannot start without) and those named in pass,
// which a person listed in the config (ci.env, run's env); then vars,
// agenttree's own values for the code ("NAME=value": the issue's
// AGENTTREE_* values, CI=true, git settings), which win over a variable
// of the same name. A name in pass that environ does not hold is left
// out, and no AGENTTREE_* variable of environ ever passes.
func Environ(environ, pass, vars []string) []string {
	return environFor(environ, pass, vars, runtime.GOOS == "windows")
}

// environFor is Environ for Windows, where names are case-insensitive, or
// not.
func environFor(environ, pass, vars []string, windows bool) []string {
	names := slices.Concat(base, pass)
	if windows {
		names = append(names, windowsBase...)
	}
	same := func(a, b string) bool { return a == b }
	if windows {
		same = strings.EqualFold
	}
	set := func(name string, list []string) bool {
		return slices.ContainsFunc(list, func(kv string) bool { k, _, _ := strings.Cut(kv, "="); return same(k, name) })
	}
	out := make([]string, 0, len(names)+len(vars))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || hasOwnPrefix(name) || set(name, vars) || set(name, out) {
			continue
		}
		if strings.HasPrefix(name, "LC_") || slices.ContainsFunc(names, func(n string) bool { return same(n, name) }) {
			out = append(out, kv)
		}
	}
	return append(out, vars...)
}

func hasOwnPrefix(name string) bool {
	return len(name) >= len(Own) && strings.EqualFold(name[:len(Own)], Own)
}

// ErrNotAName is what CheckName reports for text that is not the name of
// an environment variable.
var ErrNotAName = errors.New("not the name of an environment variable")

// CheckName says what is wrong with name as an entry of a config's list of
// variables to pass (ci.env, run's env): it must be a portable variable
// name (letters, digits and _, not starting with a digit), with no value
// (the value is this process's), and not one of agenttree's own.
func CheckName(name string) error {
	if before, _, ok := strings.Cut(name, "="); ok {
		return fmt.Errorf("%q gives a value: %w; list the name (%s) and set its value in the environment agenttree runs in", name, ErrNotAName, before)
	}
	if !validName(name) {
		return fmt.Errorf("%q is %w: use letters, digits and _, not starting with a digit", name, ErrNotAName)
	}
	if hasOwnPrefix(name) {
		return fmt.Errorf("%s is agenttree's own: the code gets the %s* values agenttree sets for it, never agenttree's settings or a session's token; use another name", name, Own)
	}
	return nil
}

func validName(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// secretWords are parts of a name that say it holds a credential,
// wherever they stand in a word of it (GH_TOKEN, NPM_AUTHTOKEN,
// AWS_SECRET_ACCESS_KEY, MYAPIKEY).
var secretWords = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY", "ACCESSKEY", "PRIVATEKEY",
	"COOKIE", "OAUTH", "AUTHORIZATION", "ASKPASS",
}

// secretParts are words of a name (between `_`) that say the same only on
// their own: KEY in API_KEY but not in MONKEY, AUTH in SSH_AUTH_SOCK but
// not in GIT_AUTHOR_NAME.
var secretParts = []string{"KEY", "KEYS", "AUTH", "PASS", "PAT"}

// secretNames are whole names that point at credentials without saying
// so: files and sockets holding them.
var secretNames = []string{"KUBECONFIG", "DOCKER_CONFIG", "NETRC", "GNUPGHOME"}

// LooksSecret reports whether the variable name looks like it holds a
// credential, or says where one is (SSH_AUTH_SOCK, KUBECONFIG). It
// guesses from the name alone: a config that passes one gets a warning,
// not an error, since a person may mean it.
func LooksSecret(name string) bool {
	upper := strings.ToUpper(name)
	if slices.Contains(secretNames, upper) {
		return true
	}
	for _, word := range strings.Split(upper, "_") {
		if slices.Contains(secretParts, word) {
			return true
		}
		if slices.ContainsFunc(secretWords, func(s string) bool { return strings.Contains(word, s) }) {
			return true
		}
	}
	return false
}
