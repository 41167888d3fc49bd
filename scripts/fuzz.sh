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
#                  2 s
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
failed=()
start=$(date +%s)
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	log=$(mktemp)
	if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "${per}s" -fuzzminimizetime "$FUZZ_MINIMIZE" "${par[@]}" >"$log" 2>&1; then
		execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
		printf 'fuzz: ok   %-45s %-28s %s execs\n' "$pkg" "$name" "${execs:-?}"
	elif grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written to' "$log"; then
		# Go's fuzzing coordinator (before Go 1.27) can report its own
		# -fuzztime deadline as a failure of the target, with no failing
		# input (golang/go#75804): the target ran its time and found
		# nothing.
		execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
		printf 'fuzz: ok   %-45s %-28s %s execs (the coordinator reported its own deadline, golang/go#75804)\n' "$pkg" "$name" "${execs:-?}"
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
