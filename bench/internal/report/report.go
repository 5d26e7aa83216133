// Package report holds what the benchmark programs print their figures
// with: percentiles, durations in milliseconds, verdicts, the machine.
package report

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Percentile is the nearest-rank percentile p of sorted values.
func Percentile[T any](sorted []T, p int) T {
	rank := max((p*len(sorted)+99)/100, 1) // ceil(p/100 * n)
	return sorted[rank-1]
}

// Ms is d in milliseconds, two decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// Verdict says whether a target was met.
func Verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// Machine is what the figures were taken on: CPUs, OS, architecture, Go.
func Machine() string {
	n := fmt.Sprint(runtime.NumCPU())
	if out, err := exec.Command("nproc").Output(); err == nil {
		n = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("nproc %s, %s/%s, %s", n, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
