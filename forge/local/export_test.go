package local

// WithoutTimeoutBin makes f's CI runners enforce the time limit themselves,
// as on a machine without coreutils timeout.
func WithoutTimeoutBin(f *Forge) { f.timeoutBin = "" }
