package main

import (
	"errors"
	"os"
	"runtime/pprof"
)

// startProfiles starts profiling into prefix.cpu when prefix is set; stop
// ends it and writes what was allocated so far into prefix.allocs (go tool
// pprof -sample_index=alloc_space).
func startProfiles(prefix string) (stop func() error, err error) {
	if prefix == "" {
		return func() error { return nil }, nil
	}
	cpu, err := os.Create(prefix + ".cpu")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return errors.Join(cpu.Close(), writeAllocs(prefix+".allocs"))
	}, nil
}

func writeAllocs(path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("allocs").WriteTo(out, 0), out.Close())
}
