#!/bin/sh
# Runs every fuzz target for a while and prints a table of what each did.
#
#   bench/fuzz.sh            # 5 s each
#   bench/fuzz.sh 60         # 60 s each
#   bench/fuzz.sh 60 Parse   # only the targets whose name contains Parse
#   bench/fuzz.sh 500x       # 500 executions each (what the README's test command runs)
#
# A count, not a time, is what CI runs: Go 1.26's fuzzing coordinator can
# report its own -fuzztime deadline as the target's failure, "context
# deadline exceeded" with no crasher (go.dev/issue/75804, fixed in Go
# 1.27); a count sets no deadline. Minimising is bounded alike.
#
# It exits 1 when a target failed (the README's test command runs it for
# a few seconds each, so CI fuzzes too).
# `go test ./...` replays each target's seed corpus (testdata/fuzz/FuzzXxx)
# without fuzzing; this is the part that looks for new inputs. A crasher
# is written to the package's testdata/fuzz/FuzzXxx, where the plain run
# replays it from then on: minimise it, fix the code, commit both. New
# inputs that widen coverage stay in Go's cache (go env GOCACHE)/fuzz, not
# in the repository. Minimising an input that widens coverage is not
# counted in execs and is bounded here to 5 s (-fuzzminimizetime).
set -u
secs=${1:-5}
only=${2:-}
case "$secs" in
*x) fuzztime=$secs minimize=100x ;;
*) fuzztime=${secs}s minimize=5s ;;
esac
cd "$(dirname "$0")/.." || exit 1

targets="
./chain FuzzVerify
./controller/api FuzzDecode
./controller/api FuzzDecodeBounded
./stages FuzzRender
./stages/condition FuzzCompile
./stages/load FuzzParse
./hooks/docs FuzzSection
./hooks/shell FuzzScript
./forge/github/webhook FuzzReceiver
./forge/github/ghapi FuzzAnswers
./engine/issues/eventlog FuzzCheck
./engine/issues FuzzVerify
./engine/issues/record FuzzEncodeWatch
"

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
printf '| target | package | seconds | execs | new corpus entries | result |\n|---|---|---|---|---|---|\n'
start=$(date +%s)
echo "$targets" | while read -r pkg fn; do
	[ -n "$pkg" ] || continue
	case "$fn" in *"$only"*) ;; *) continue ;; esac
	out="$log/$fn.log"
	t0=$(date +%s)
	if go test -run '^$' -fuzz "^$fn\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" >"$out" 2>&1; then
		result=ok
	else
		result="FAIL: $(grep -m1 -o 'testdata/fuzz/[^ ]*' "$out" || tail -n 1 "$out")"
		# The loop is a pipe's subshell: its variables die with it.
		touch "$log/failed"
	fi
	t1=$(date +%s)
	last=$(grep '^fuzz: elapsed' "$out" | tail -n 1)
	execs=$(echo "$last" | sed -n 's/.*execs: \([0-9]*\).*/\1/p')
	new=$(echo "$last" | sed -n 's/.*new interesting: \([0-9]*\).*/\1/p')
	printf '| %s | %s | %s | %s | %s | %s |\n' "$fn" "${pkg#./}" "$((t1 - t0))" "${execs:-0}" "${new:-0}" "$result"
	if [ "$result" != ok ]; then
		sed 's/^/    /' "$out" | grep -v '^    fuzz: elapsed' | head -n 40 >&2
	fi
done
echo "total: $(($(date +%s) - start)) s (compiling included)"
if [ -e "$log/failed" ]; then
	exit 1
fi
