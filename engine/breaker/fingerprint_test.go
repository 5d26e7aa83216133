package breaker_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/engine/breaker"
)

func TestFingerprintIgnoresWhatVariesBetweenRuns(t *testing.T) {
	tests := []struct {
		name string
		a, b string // two details of test-unit that are the same failure
	}{
		{"durations", "--- FAIL: TestAdd (0.02s)", "--- FAIL: TestAdd (1m3.5s)"},
		{"directories and line numbers", "/home/ci/work/calc_test.go:42: expected 4 got 5", "/tmp/x9/calc_test.go:57:3: expected 4 got 5"},
		{"numbers", "expected 4 got 5", "expected 7 got 12"},
		{"timestamps", "2024-05-01T12:00:03.51Z build failed", "2025-11-30 08:15:00 build failed"},
		{"clock times", "[12:00:03] build failed", "[9:15:00.250] build failed"},
		{"commit ids and addresses", "at 3f1c0a9be2 (0xc000a1b2)", "at 77aa01c (0xc0ffee00)"},
		{"colours", "\x1b[31mFAIL\x1b[0m TestAdd", "FAIL TestAdd"},
		{"case and spacing", "FAIL   TestAdd  ", "fail testadd"},
		{"blank lines", "\n\nfirst\n\nsecond\n", "first\nsecond"},
		{"lines after the third", "one\ntwo\nthree\ngoroutine 7 [running]:", "one\ntwo\nthree\ngoroutine 9 [chan receive]:"},
		{"a shell's trace of the command", "+ go test -coverprofile=/tmp/tmp.Xa3/c.out ./...\nFAIL TestAdd", "FAIL TestAdd"},
		{"a prompt and a step header", "$ make test\n##[group]Run make test\nFAIL TestAdd", "FAIL TestAdd"},
		{"a hook's reason quoting its command", "command \"go test ./... -run 'TestAdd'\" failed (exit 1, general):\nFAIL TestAdd",
			"command \"make test SEED=4411\\nmake lint\" failed (exit 1, general):\nFAIL TestAdd"},
		{"temporary directories", "open /tmp/go-build1234/b001/importcfg: no such file", "open /var/folders/x1/ab_cd/T/go-build99/b7/importcfg: no such file"},
		{"ids", "run 123e4567-e89b-12d3-a456-426614174000 failed", "run 9f0c1d2e-aaaa-4bbb-8ccc-0123456789ab failed"},
	}
	for _, tt := range tests {
		a := breaker.Fingerprint([]breaker.Failure{fail("test-unit", tt.a)})
		b := breaker.Fingerprint([]breaker.Failure{fail("test-unit", tt.b)})
		assert.Equal(t, a, b, tt.name)
	}
}

func TestFingerprintOfSeveralChecks(t *testing.T) {
	unit := fail("test-unit", "calc_test.go:42: expected 4 got 5")
	lint := fail("lint", "calc.go:3:1: exported func Add should have comment")
	want := breaker.Fingerprint([]breaker.Failure{unit, lint})
	same := map[string][]breaker.Failure{
		"another order":        {lint, unit},
		"check names in caps":  {fail("Test-Unit", unit.Detail), fail("LINT", lint.Detail)},
		"a failure said twice": {unit, lint, unit},
	}
	for name, failing := range same {
		assert.Equal(t, want, breaker.Fingerprint(failing), name)
	}
	other := map[string][]breaker.Failure{
		"another assertion":          {fail("test-unit", "calc_test.go:42: nil map"), lint},
		"another check":              {fail("test-race", unit.Detail), lint},
		"one check fewer":            {unit},
		"another file":               {fail("test-unit", "sum_test.go:42: expected 4 got 5"), lint},
		"letters that look like hex": {fail("test-unit", "calc_test.go:42: defaced"), lint},
		"a different third line":     {fail("test-unit", unit.Detail+"\nsecond\nthird"), lint},
	}
	for name, failing := range other {
		assert.NotEqual(t, want, breaker.Fingerprint(failing), name)
	}
}

func TestFingerprintReads(t *testing.T) {
	assert.Empty(t, breaker.Fingerprint(nil))

	fp := breaker.Fingerprint([]breaker.Failure{fail("Test-Unit", "\n  /w/calc_test.go:42: expected 4 got 5\n")})
	hash, readable, ok := strings.Cut(fp, " ")
	assert.True(t, ok, fp)
	assert.Len(t, hash, 12)
	assert.Equal(t, "test-unit: calc_test.go:<line>: expected <n> got <n>", readable)

	long := breaker.Fingerprint([]breaker.Failure{fail("test-unit", strings.Repeat("very long line ", 10))})
	assert.Equal(t, "test-unit: very long line very long line very long line ver…", strings.SplitN(long, " ", 2)[1])
	assert.Equal(t, "test-unit", strings.SplitN(breaker.Fingerprint([]breaker.Failure{fail("test-unit", "")}), " ", 2)[1])
}
