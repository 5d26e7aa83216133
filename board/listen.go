package board

import (
	"fmt"
	"net"
	"net/url"

	"github.com/agenttree/agenttree/internal/loopback"
)

// Listen listens on addr (host:port; port 0 picks a free one). Only a
// loopback address unless public: the board shows every issue and acts
// as the person who started it, to whoever has its URL.
func Listen(addr string, public bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("the board's address %q is not host:port (e.g. 127.0.0.1:8080): %w", addr, err)
	}
	if !public && !loopback.Host(host) {
		return nil, fmt.Errorf("the board's address %q is not a loopback address: anyone who reaches it and has its URL "+
			"sees every issue and acts as you; listen on 127.0.0.1, or pass --public to listen there anyway", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("the board cannot listen on %s: %w (pick another port with --http)", addr, err)
	}
	return ln, nil
}

// URL is the address people open: the listener's, with the login token in
// its query string. An unspecified address (every interface) is shown as
// the loopback one.
func URL(ln net.Listener, token string) string {
	addr, ok := ln.Addr().(*net.TCPAddr)
	host := ln.Addr().String()
	if ok {
		ip := addr.IP
		if ip.IsUnspecified() {
			ip = net.IPv4(127, 0, 0, 1)
		}
		host = net.JoinHostPort(ip.String(), fmt.Sprint(addr.Port))
	}
	u := url.URL{Scheme: "http", Host: host, Path: "/", RawQuery: url.Values{"token": {token}}.Encode()}
	return u.String()
}
