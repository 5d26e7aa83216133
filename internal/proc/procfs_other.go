//go:build !linux

package proc

func inspect(int) (Info, error)   { return Info{}, ErrNoProcfs }
func inGroup(int) ([]Info, error) { return nil, ErrNoProcfs }
func stdin(int) string            { return "" }
func cmdline(int) []string        { return nil }
