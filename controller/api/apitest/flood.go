// Package apitest floods the controller's socket for tests, as an agent
// denying the others service would: many connections, each sending a
// request's headers and one byte of its body, then nothing. The flood runs
// in a process of its own, as another OS user (a test binary whose
// TestMain calls FloodMain, run through ostest.User.Command), so that its
// thousands of connections count against neither the test's open file
// limit nor its uid.
package apitest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/internal/syncbuf"
)

// floodEnv carries a flood's settings (JSON) to the process running it.
const floodEnv = "AGENTTREE_APITEST_FLOOD"

// Flood is what a flood does.
type Flood struct {
	Socket string `json:"socket"`
	// Token is the session token the requests carry: without one an
	// agent's request is refused before its body is read.
	Token string `json:"token"`
	// Conns is how many connections it opens, as fast as the socket takes
	// them.
	Conns int `json:"conns"`
	// Refill, when above 0, opens a new connection for each one the
	// server closes, at most this many a second, once the first Conns
	// are opened: the flood is held as the server lets connections go,
	// without spinning the CPU on connections refused at once.
	Refill int `json:"refill"`
	// For bounds the flood: it stops by itself then, or sooner when its
	// standard input closes (Stop).
	For time.Duration `json:"for"`
}

// Progress is what a flood has done so far.
type Progress struct {
	// Opened counts the connections opened (connect succeeded).
	Opened int `json:"opened"`
	// Open is how many are open now, on the flood's side: held by the
	// server, or waiting in the socket's backlog to be accepted.
	Open int `json:"open"`
	// Closed counts those the server closed.
	Closed int `json:"closed"`
	// DialErrors counts the connects refused (the backlog full): each is
	// tried again.
	DialErrors int  `json:"dial_errors"`
	Done       bool `json:"done"`
}

// partial is a request's headers and the first byte of its body, which
// announces 1 KiB.
func partial(token string) string {
	return "POST " + api.RouteNext + " HTTP/1.1\r\nHost: agenttree\r\nAuthorization: Bearer " + token +
		"\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n{"
}

// FloodMain runs the flood and exits when this process was started as one
// (Start), and returns at once otherwise. Call it first in the TestMain of
// a package whose tests flood:
//
//	func TestMain(m *testing.M) {
//		apitest.FloodMain()
//		os.Exit(m.Run())
//	}
func FloodMain() {
	spec := os.Getenv(floodEnv)
	if spec == "" {
		return
	}
	var f Flood
	if err := json.Unmarshal([]byte(spec), &f); err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.For)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	run(ctx, f, os.Stdout)
	os.Exit(0)
}

// run floods until ctx is done, printing its progress as JSON lines on
// out, every 100 ms and once at the end.
func run(ctx context.Context, f Flood, out io.Writer) {
	var fl flooding
	fl.conns = map[*connHolder]struct{}{}
	enc := json.NewEncoder(out)
	report := time.NewTicker(100 * time.Millisecond)
	defer report.Stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-report.C:
				_ = enc.Encode(fl.progress(false))
			}
		}
	}()

	for i := 0; i < f.Conns && ctx.Err() == nil; i++ {
		fl.open(ctx, f.Socket, partial(f.Token))
	}
	if f.Refill > 0 {
		every := time.Second / time.Duration(f.Refill)
		for ctx.Err() == nil {
			if fl.openNow() < f.Conns {
				fl.open(ctx, f.Socket, partial(f.Token))
			}
			select {
			case <-ctx.Done():
			case <-time.After(every):
			}
		}
	}
	<-ctx.Done()
	fl.closeAll()
	_ = enc.Encode(fl.progress(true))
}

type connHolder struct{ c io.Closer }

type flooding struct {
	opened, closed, dialErrors atomic.Int64
	mu                         sync.Mutex
	conns                      map[*connHolder]struct{}
	stopped                    bool
	wg                         sync.WaitGroup
}

// open opens one connection, sends it the partial request and waits on
// it in the background until the server closes it. A refused connect is
// tried again.
func (fl *flooding) open(ctx context.Context, socket, request string) {
	for ctx.Err() == nil {
		conn, err := api.Dial(ctx, socket)
		if err != nil {
			fl.dialErrors.Add(1)
			select {
			case <-ctx.Done():
			case <-time.After(time.Millisecond):
			}
			continue
		}
		fl.opened.Add(1)
		h := &connHolder{c: conn}
		fl.mu.Lock()
		if fl.stopped {
			fl.mu.Unlock()
			conn.Close()
			return
		}
		fl.conns[h] = struct{}{}
		fl.mu.Unlock()
		fl.wg.Go(func() {
			_, err := io.WriteString(conn, request)
			if err == nil {
				// The server answers nothing before the body: a read
				// ends when it closes the connection.
				_, _ = conn.Read(make([]byte, 1))
			}
			fl.mu.Lock()
			defer fl.mu.Unlock()
			if _, ours := fl.conns[h]; !ours {
				return // closed by closeAll
			}
			delete(fl.conns, h)
			conn.Close()
			fl.closed.Add(1)
		})
		return
	}
}

func (fl *flooding) openNow() int {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return len(fl.conns)
}

func (fl *flooding) closeAll() {
	fl.mu.Lock()
	fl.stopped = true
	for h := range fl.conns {
		h.c.Close()
		delete(fl.conns, h)
	}
	fl.mu.Unlock()
	fl.wg.Wait()
}

func (fl *flooding) progress(done bool) Progress {
	return Progress{Opened: int(fl.opened.Load()), Open: fl.openNow(), Closed: int(fl.closed.Load()),
		DialErrors: int(fl.dialErrors.Load()), Done: done}
}

// Running is a flood under way.
type Running struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	latest atomic.Pointer[Progress]
	ended  chan struct{}
	stderr *syncbuf.Buffer
}

// Start starts f run by cmd: a test binary whose TestMain calls FloodMain,
// usually as another OS user. The flood is stopped when t ends, if it has
// not stopped before.
func Start(t testing.TB, cmd *exec.Cmd, f Flood) *Running {
	t.Helper()
	spec, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Environ(), floodEnv+"="+string(spec))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &Running{cmd: cmd, stdin: stdin, ended: make(chan struct{}), stderr: &syncbuf.Buffer{}}
	r.latest.Store(&Progress{})
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the flood: %v", err)
	}
	go func() {
		defer close(r.ended)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var p Progress
			if json.Unmarshal(sc.Bytes(), &p) == nil {
				r.latest.Store(&p)
			}
		}
	}()
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// Progress is what the flood last reported.
func (r *Running) Progress() Progress { return *r.latest.Load() }

// Stop ends the flood, waits for its process and returns its last
// report. Calling it again returns the same.
func (r *Running) Stop(t testing.TB) Progress {
	t.Helper()
	_ = r.stdin.Close()
	<-r.ended
	if r.cmd.ProcessState == nil {
		if err := r.cmd.Wait(); err != nil {
			t.Errorf("the flood ended with %v: %s", err, r.stderr.String())
		}
	}
	return r.Progress()
}
