//go:build unix

package proc

import (
	"io/fs"
	"syscall"
)

// OwnerUID is the uid owning the file fi describes; false where the
// system does not say.
func OwnerUID(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
