package identity

import "os"

// Namespace is this process's mount namespace ("mnt:[4026531840]").
func Namespace() string {
	ns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return ""
	}
	return ns
}
