// Package ghforward is what `gh webhook forward` does, against the fake
// GitHub (forge/github/githubtest) instead of GitHub: it makes the
// repository's "cli" hook with the secret it was given, failing as gh
// does on GitHub's 422 when one is there, then relays each delivery,
// headers and body, to --url, answering with the receiver's status.
//
// gh receives over a websocket from GitHub; this one receives the fake's
// POSTs on a loopback port of its own. A test or bench program becomes
// the forwarder by calling Main first thing, and names itself as the
// forward command with Command.
//
// One flag is the fake's own, not gh's: --drop-while=FILE makes it a
// forwarder that is up but stalled. While FILE exists it relays nothing
// and answers each delivery with the status FILE holds (502 when it holds
// none): GitHub records a failed delivery, or, with a 2xx, one that never
// reached the receiver.
package ghforward

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// Command is a forward command (watch.Events.ForwardCommand) that starts
// this program again as the forwarder against the fake GitHub at url with
// token, env naming the variable the program's Main reads.
func Command(env, url, token string) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// env(1) carries the fake's address: the forge starts the command
	// with the controller's environment and nothing more.
	return []string{"env", env + "=" + url + " " + token, exe}, nil
}

// Main runs the forwarder and exits when the variable env is set (its
// value is the fake GitHub's URL and token, a space between); otherwise
// it returns at once. A program, or a test binary's TestMain, calls it
// first thing.
func Main(env string) {
	fake := os.Getenv(env)
	if fake == "" {
		return
	}
	os.Exit(Run(fake, os.Args[1:]))
}

// Run is the forwarder with gh webhook forward's flags in args, against
// the fake GitHub named by fake ("URL TOKEN"). It returns the exit code:
// 2 for bad flags, 1 when the hook cannot be made or serving stops.
func Run(fake string, args []string) int {
	fs := flag.NewFlagSet("forward", flag.ContinueOnError)
	repo := fs.String("repo", "", "")
	events := fs.String("events", "", "")
	url := fs.String("url", "", "")
	secret := fs.String("secret", "", "")
	fs.String("github-host", "", "")
	drop := fs.String("drop-while", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	base, token, _ := strings.Cut(fake, " ")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	body, _ := json.Marshal(map[string]any{"name": "cli", "active": true, "events": strings.Split(*events, ","),
		"config": map[string]any{"url": "http://" + ln.Addr().String() + "/", "content_type": "json", "secret": *secret}})
	req, err := http.NewRequest(http.MethodPost, base+"/repos/"+*repo+"/hooks", bytes.NewReader(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	req.Header.Set("Authorization", "token "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		fmt.Fprintf(os.Stderr, "error creating webhook: HTTP %d: %s\n", resp.StatusCode, answer)
		return 1
	}
	fmt.Println("Forwarding Webhook events from GitHub...")
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if code, stalled := dropping(*drop); stalled {
			w.WriteHeader(code)
			return
		}
		fwd, err := http.NewRequest(http.MethodPost, *url, bytes.NewReader(b))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k := range r.Header {
			fwd.Header.Set(k, r.Header.Get(k))
		}
		resp, err := http.DefaultClient.Do(fwd)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
	}))
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// dropping says whether the file named by --drop-while exists, and the
// status to answer with then.
func dropping(file string) (int, bool) {
	if file == "" {
		return 0, false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || code < 100 || code > 599 {
		code = http.StatusBadGateway
	}
	return code, true
}
