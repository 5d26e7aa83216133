package chain

import "errors"

// ErrCrash is what a Write stopped by CrashAfterLog returns.
var ErrCrash = errors.New("crashed after the log's line")

// CrashAfterLog stops every Write between its line in the log and the
// file's replacement, as a crash there does; CrashAfterLog(false) lets
// them finish again.
func CrashAfterLog(crash bool) {
	logged = nil
	if crash {
		logged = func() error { return ErrCrash }
	}
}
