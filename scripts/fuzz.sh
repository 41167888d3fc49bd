#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded time each, and fails
# if any finds a crasher. Go saves a crasher as a corpus entry under the
# package's testdata/fuzz/<Target>/, where `go test` then replays it as a
# regression test: commit it with the fix.
#
# Usage: scripts/fuzz.sh [PACKAGE...]        (default: ./...)
# Environment:
#   FUZZ_TIME      fuzzing time per target (default 10s)
#   FUZZ_MINIMIZE  -fuzzminimizetime (default 200x: a number of runs, so
#                  that minimising what the fuzzer finds never stalls it;
#                  Go's default of 60 s per input leaves a short run at 0
#                  execs/s most of its time)
#   FUZZ_BUDGET    seconds for the whole run (default 300, which keeps the
#                  CI run, tests included, well under 30 minutes); when the
#                  targets at FUZZ_TIME would take longer (counting about
#                  FUZZ_OVERHEAD, default 4 s, per target for building and
#                  replaying its corpus), each gets an even share, at least
#                  2 s; a target whose corpus replay (the baseline
#                  coverage) takes its whole time runs once more for four
#                  times as long, so that every target tries new inputs
#   FUZZ_PARALLEL  -parallel, fuzzing workers per target (default: GOMAXPROCS)
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_TIME=${FUZZ_TIME:-10s}
FUZZ_MINIMIZE=${FUZZ_MINIMIZE:-200x}
FUZZ_BUDGET=${FUZZ_BUDGET:-300}
pkgs=("$@")
((${#pkgs[@]})) || pkgs=(./...)

secs() { # a Go duration of whole seconds or minutes -> seconds
	case $1 in
	*m) echo $((${1%m} * 60)) ;;
	*s) echo "${1%s}" ;;
	*) echo "$1" ;;
	esac
}

# Targets: `go test -list` prints each package's matching tests, then
# "ok <package>".
list=$(mktemp)
trap 'rm -f "$list"' EXIT
if ! go test -list '^Fuzz' "${pkgs[@]}" >"$list" 2>&1; then
	echo "fuzz: listing the fuzz targets failed:" >&2
	cat "$list" >&2
	exit 1
fi
targets=()
names=()
while read -r line; do
	case $line in
	Fuzz*) names+=("$line") ;;
	"ok "*)
		pkg=$(awk '{print $2}' <<<"$line")
		for n in "${names[@]}"; do targets+=("$pkg $n"); done
		names=()
		;;
	esac
done <"$list"

n=${#targets[@]}
if ((n == 0)); then
	echo "fuzz: no fuzz targets found in ${pkgs[*]}" >&2
	exit 1
fi
per=$(secs "$FUZZ_TIME")
over=${FUZZ_OVERHEAD:-4}
if (((per + over) * n > FUZZ_BUDGET)); then
	per=$((FUZZ_BUDGET / n - over))
	((per >= 2)) || per=2
fi
echo "fuzz: $n targets, ${per}s each, minimisation $FUZZ_MINIMIZE (budget ${FUZZ_BUDGET}s)"

par=()
[[ -n ${FUZZ_PARALLEL:-} ]] && par=(-parallel "$FUZZ_PARALLEL")
# execs LOG: the fuzzer's last count of executions, or nothing when it never
# got past gathering its baseline coverage (its corpus, replayed with
# coverage, can take a short run's whole time on a slow machine).
execs() { { grep -o 'execs: [0-9]*' "$1" || true; } | tail -1 | awk '{print $2}'; }
# fuzz PKG NAME SECS LOG: runs one target; fails only on a crasher (a
# failure with no failing input but Go's own deadline, golang/go#75804, is
# the target having run its time).
fuzz() {
	go test "$1" -run '^$' -fuzz "^${2}\$" -fuzztime "${3}s" -fuzzminimizetime "$FUZZ_MINIMIZE" "${par[@]}" >"$4" 2>&1 && return 0
	grep -q '^    context deadline exceeded$' "$4" && ! grep -q 'Failing input written to' "$4"
}

failed=()
start=$(date +%s)
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	log=$(mktemp)
	secs=$per
	ok=1
	fuzz "$pkg" "$name" "$secs" "$log" || ok=0
	if ((ok)) && [[ -z $(execs "$log") ]]; then
		# The baseline took the whole time and nothing new was tried:
		# once more, with time to fuzz after it.
		secs=$((per * 4))
		fuzz "$pkg" "$name" "$secs" "$log" || ok=0
	fi
	if ((ok)); then
		note=""
		grep -q '^    context deadline exceeded$' "$log" && note=" (the coordinator reported its own deadline, golang/go#75804)"
		e=$(execs "$log")
		[[ -n $e ]] || note=" (baseline coverage only: $({ grep -o 'gathering baseline coverage: [0-9/]*' "$log" || true; } | tail -1 | awk '{print $4}') inputs replayed, none new)"
		printf 'fuzz: ok   %-45s %-28s %s execs in %ss%s\n' "$pkg" "$name" "${e:-0}" "$secs" "$note"
	else
		printf 'fuzz: FAIL %-45s %s\n' "$pkg" "$name"
		sed 's/^/    /' "$log" | tail -40
		failed+=("$pkg $name")
	fi
	rm -f "$log"
done
echo "fuzz: $n targets in $(($(date +%s) - start))s"
if ((${#failed[@]})); then
	echo "fuzz: ${#failed[@]} target(s) failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	echo "fuzz: each crasher is saved under its package's testdata/fuzz/<Target>/ (go test replays it)" >&2
	exit 1
fi
