package api

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/agenttree/agenttree/internal/identity"
)

// Limits bound what the socket holds open. Every connection costs the
// controller a file descriptor: without a bound, connections that send
// their headers and one byte of a body, then wait, use up the descriptors
// and the controller can open nothing else (no pass, no request answered)
// until they close (docs/SECURITY.md).
type Limits struct {
	// Conns is the most connections open at once. Agents altogether hold
	// at most Conns-PerPeer of them: the rest is kept for people on the
	// host (the state directory's owner and root).
	Conns int
	// PerPeer is the most one peer holds open: one uid on the host, or
	// one uid in containers (root in a container is not root on the
	// host). A peer at its cap has its new connections closed at once,
	// and the client asks again with backoff: a flood slows that peer
	// only.
	PerPeer int
	// Request bounds reading one request, headers and body, from its
	// first byte.
	Request time.Duration
	// Reply bounds writing the answer once the work is done. The work
	// itself is not bounded here: `next` runs gates that may take
	// minutes.
	Reply time.Duration
}

// The most connections, whatever the open file limit. Agents need few:
// one request, rarely two, in flight per agent. Every agent of one OS user
// shares its uid's cap, so maxConnsPerPeer leaves room for a hundred or so
// agents of one user at once. Each open connection also costs a goroutine
// and about 10 KiB of buffers: maxConns keeps that near 40 MiB.
const (
	maxConns        = 4096
	maxConnsPerPeer = 256
)

// DefaultLimits are the limits for this process's open file limit.
// Connections get a quarter of it: the rest is the controller's own
// (state files, git, tmux and the gates' processes and pipes, which the
// requests admitted also start). The soft limit read is already as high as
// it goes: Go raises it to the hard limit when a program starts (Go 1.19;
// the processes it starts get the original back), so raising it here would
// add nothing.
func DefaultLimits() Limits {
	conns := max(16, min(maxConns, openFileLimit()/4))
	return Limits{
		Conns: conns,
		// A peer gets an eighth of all: one user's flood leaves the rest
		// to the others, and people keep their share (Conns) even when
		// seven agent users flood at once.
		PerPeer: min(maxConnsPerPeer, conns/8),
		// A request is at most MaxRequestBytes of JSON that the client
		// writes at once over a local socket: it arrives in milliseconds.
		// Ten seconds is for a machine under load.
		Request: 10 * time.Second,
		// An answer (`status` of thousands of issues: a few MiB) is read
		// by a local client as fast as it is written.
		Reply: 30 * time.Second,
	}
}

// withDefaults fills what l leaves zero from DefaultLimits, and keeps a
// peer's cap at half the total at most, so that people keep their room.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Conns <= 0 {
		l.Conns = d.Conns
	}
	if l.PerPeer <= 0 {
		l.PerPeer = d.PerPeer
	}
	l.PerPeer = max(1, min(l.PerPeer, l.Conns/2))
	if l.Request <= 0 {
		l.Request = d.Request
	}
	if l.Reply <= 0 {
		l.Reply = d.Reply
	}
	return l
}

// logRefusalsEvery is how often a peer's refused connections are logged
// at most: a flood is thousands a second.
const logRefusalsEvery = time.Minute

// bucket is whom a connection counts against: a peer by what the kernel
// says of it. A peer whose uid cannot be told counts as uid -1.
type bucket struct {
	uid       int
	container bool
}

// refusals is what a bucket had refused since its last log line: how
// many, from when.
type refusals struct {
	n             int
	first, logged time.Time
}

// limitListener admits a connection only within its limits, telling its
// peer from the kernel's credentials (SO_PEERCRED) when it is accepted,
// before the HTTP server reads a byte of it. A connection over a limit is
// closed at once.
type limitListener struct {
	net.Listener
	limits Limits
	owner  int
	log    *slog.Logger

	mu       sync.Mutex
	open     map[bucket]int
	total    int
	agents   int
	refusals map[bucket]*refusals
}

func newLimitListener(ln net.Listener, limits Limits, owner int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, limits: limits, owner: owner, log: log,
		open: map[bucket]int{}, refusals: map[bucket]*refusals{}}
}

// Accept returns the next connection within the limits, closing those
// over them.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		p := peerOf(c)
		if pc := l.admit(c, p); pc != nil {
			return pc, nil
		}
		_ = c.Close()
	}
}

func peerOf(c net.Conn) peer {
	p := peer{err: errNotUnix}
	if uc, ok := c.(*net.UnixConn); ok {
		p.proc, p.pid, p.err = identity.Peer(uc)
	}
	return p
}

// admit counts c against its peer's bucket, or returns nil when that
// would go over a limit.
func (l *limitListener) admit(c net.Conn, p peer) *peerConn {
	b := bucket{uid: -1, container: true}
	if p.err == nil {
		b = bucket{uid: p.proc.UID, container: p.proc.Container}
	}
	person := p.err == nil && p.proc.Person(l.owner)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open[b] >= l.limits.PerPeer:
		l.refused(b, "a peer is at its cap of connections to the controller's socket: its new ones are closed at once", l.limits.PerPeer)
		return nil
	case l.total >= l.limits.Conns:
		l.refused(b, "the controller's socket is at its cap of connections: new ones are closed at once", l.limits.Conns)
		return nil
	case !person && l.agents >= l.limits.Conns-l.limits.PerPeer:
		l.refused(b, "agents are at their cap of connections to the controller's socket (the rest is kept for people): their new ones are closed at once", l.limits.Conns-l.limits.PerPeer)
		return nil
	}
	l.open[b]++
	l.total++
	if !person {
		l.agents++
	}
	return &peerConn{Conn: c, peer: p, release: func() { l.release(b, person) }}
}

func (l *limitListener) release(b bucket, person bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if !person {
		l.agents--
	}
	if l.open[b]--; l.open[b] <= 0 {
		delete(l.open, b)
	}
}

// refused logs that b had a connection refused, at most once per
// logRefusalsEvery for each peer, with how many were refused since the
// last line. l.mu is held.
func (l *limitListener) refused(b bucket, msg string, limit int) {
	now := time.Now()
	r := l.refusals[b]
	if r == nil {
		r = &refusals{}
		l.refusals[b] = r
	}
	if r.n == 0 {
		r.first = now
	}
	r.n++
	if now.Sub(r.logged) < logRefusalsEvery {
		return
	}
	l.log.Warn(msg, "uid", b.uid, "container", b.container, "open", l.open[b], "limit", limit,
		"refused", r.n, "over", now.Sub(r.first).Round(time.Millisecond))
	r.n, r.logged = 0, now
	// Peers not refused of late are forgotten: the map holds those a
	// line is kept back for.
	for k, r := range l.refusals {
		if now.Sub(r.logged) >= logRefusalsEvery {
			delete(l.refusals, k)
		}
	}
}

// peerConn is an admitted connection: it knows its peer, and gives its
// place back when it closes.
type peerConn struct {
	net.Conn
	peer    peer
	once    sync.Once
	release func()
}

func (c *peerConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
