// Package progress shows, on a terminal, that a command is still at work:
// a spinner with what it waits for and for how long, drawn only once the
// wait passes a second and wiped when it ends, so quick commands and
// anything that is not a terminal never see it.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Delay is how long a wait goes unshown.
const Delay = time.Second

const frameEvery = 120 * time.Millisecond

var frames = [...]string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Spinner is one wait being shown. Its zero value, and a nil one, show
// nothing.
type Spinner struct {
	w     io.Writer
	what  string
	start time.Time
	stop  chan struct{}
	done  sync.WaitGroup
}

// Terminal reports whether w is a terminal a spinner may draw on: not
// with TERM=dumb, which cannot move back over a line.
func Terminal(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && getenv("TERM") != "dumb"
}

// Start shows what is waited for on w once Delay has passed, when on;
// otherwise it returns a Spinner that shows nothing.
func Start(w io.Writer, on bool, what string) *Spinner {
	if !on {
		return nil
	}
	s := &Spinner{w: w, what: what, start: time.Now(), stop: make(chan struct{})}
	s.done.Add(1)
	go s.run()
	return s
}

func (s *Spinner) run() {
	defer s.done.Done()
	select {
	case <-s.stop:
		return
	case <-time.After(Delay):
	}
	t := time.NewTicker(frameEvery)
	defer t.Stop()
	for i := 0; ; i++ {
		fmt.Fprintf(s.w, "\r%s %s (%s)\x1b[K", frames[i%len(frames)], s.what, time.Since(s.start).Round(time.Second))
		select {
		case <-s.stop:
			fmt.Fprint(s.w, "\r\x1b[K")
			return
		case <-t.C:
		}
	}
}

// Stop ends the wait and wipes its line, before the command says what
// came of it.
func (s *Spinner) Stop() {
	if s == nil {
		return
	}
	close(s.stop)
	s.done.Wait()
}
