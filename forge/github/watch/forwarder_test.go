package watch

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

// fakeForwarderEnv makes the test binary the fake `gh webhook forward`,
// with the fake GitHub's URL and token in the variable's value.
const fakeForwarderEnv = "AGENTTREE_TEST_FAKE_GH_FORWARD"

// runFakeForwarder does against the fake GitHub what gh webhook forward
// does against GitHub: it makes the repository's "cli" hook with the
// secret it was given (failing as gh does on GitHub's 422 when one is
// there), and relays each delivery, headers and body, to --url, answering
// with the receiver's status. gh receives over a websocket from GitHub;
// this one receives the fake's POSTs on a loopback port of its own.
func runFakeForwarder(args []string) int {
	fs := flag.NewFlagSet("forward", flag.ContinueOnError)
	repo := fs.String("repo", "", "")
	events := fs.String("events", "", "")
	url := fs.String("url", "", "")
	secret := fs.String("secret", "", "")
	fs.String("github-host", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	base, token, _ := strings.Cut(os.Getenv(fakeForwarderEnv), " ")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	body, _ := json.Marshal(map[string]any{"name": "cli", "active": true, "events": strings.Split(*events, ","),
		"config": map[string]any{"url": "http://" + ln.Addr().String() + "/", "content_type": "json", "secret": *secret}})
	req, _ := http.NewRequest(http.MethodPost, base+"/repos/"+*repo+"/hooks", bytes.NewReader(body))
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
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fwd, _ := http.NewRequest(http.MethodPost, *url, bytes.NewReader(b))
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
	return 1
}
