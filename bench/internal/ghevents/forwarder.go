package ghevents

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
)

// env, when set, makes the program the forwarder; its value is the fake
// GitHub's URL and token, a space between.
const env = "AGENTTREE_BENCH_FAKE_GH_FORWARD"

// forwardCommand is events.forward_command for a forwarder that is this
// program, started again, against the fake GitHub at url with token.
func forwardCommand(url, token string) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// env(1) carries the fake's address: the forge starts the command
	// with the controller's environment and nothing more.
	return []string{"env", env + "=" + url + " " + token, exe}, nil
}

// Main runs the forwarder and exits when the program was started as one
// (events.mode gh-forward); otherwise it returns at once. A program calls it first
// thing in main.
func Main() {
	fake := os.Getenv(env)
	if fake == "" {
		return
	}
	os.Exit(run(fake, os.Args[1:]))
}

func run(fake string, args []string) int {
	fs := flag.NewFlagSet("forward", flag.ContinueOnError)
	repo := fs.String("repo", "", "")
	events := fs.String("events", "", "")
	url := fs.String("url", "", "")
	secret := fs.String("secret", "", "")
	fs.String("github-host", "", "")
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
