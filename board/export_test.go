package board

import "time"

// SetLimits sets the board's timeouts and event stream bound, for tests
// that cannot wait for the defaults.
func SetLimits(s *Server, readHeader, read, write, idle time.Duration, streams int) {
	s.setLimits(limits{readHeader: readHeader, read: read, write: write, idle: idle, streams: streams})
}

// OnRead has f called with a stream's path each time it reads its page.
func OnRead(s *Server, f func(path string)) { s.onRead = f }
