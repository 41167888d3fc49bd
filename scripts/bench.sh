#!/usr/bin/env bash
# Benchmarks: ibtool against the C infiniband-diags, both run against the
# same simulated fabric served over ibsim's protocol (the C tools through
# libumad2sim, ours through --fabric ibsim).
#
# Usage: scripts/bench.sh [ROW...]     (default: every row; `-l` lists them)
#
# One row per tool and fabric. A row is a line of ROWS below:
#
#   name  server  topology  latency  args
#
#   name      the row's name (what to pass to run only it)
#   server    ibsim (ibsim 0.10 + OpenSM, no latency model) or fabricsim
#             (our server with its built-in SM and SA, and a latency model)
#   topology  a fabricsim generator (fabricsim gen) or a topology file
#   latency   fabricsim's -latency value, "-" for none
#   args      the command line both tools run (first word: the tool)
#
# Each row prints the node count, the wall time of the C tool and of ours
# (best of $BENCH_RUNS, default 3), the speedup, and whether the outputs
# are the same (data counters masked: the tools' own traffic moves them).
# A fabricsim row with latency also prints the C tool's time at the
# nominal latency: its own time with the latency off plus the delays the
# latency model gave its MADs (fabricsim's count, per run), which is what
# a tool with one MAD in flight would take on a fabric of exactly that
# latency; and the speedup against that figure too, so that a ratio does
# not rest on the simulator delivering late.
# A tool with no C peer installed (ibdiagnet: ibutils' is not packaged
# with a working simulator path) is timed alone: its row prints ours and
# the exit status. Add a row to ROWS for a new tool; nothing else changes.
# Benchmarks that are not one command against its C twin are sibling
# scripts in bench/, run after the rows when no row is named (or alone:
# `bench.sh exporter` runs bench/exporter.sh): ibnetdiscover's rows and
# the exporter's.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=(
	# ibsim: 2000 nodes, no latency (ours must be no slower).
	"ibqueryerrors-ibsim    ibsim      leafspine:leaves=50,spines=8,hosts=38,uplinks=8    -    ibqueryerrors"
	# fabricsim: 10,000 nodes with latency (the C tool keeps one or two
	# MADs in flight, ours 256; docs/performance.md has the ratio).
	"ibqueryerrors-latency  fabricsim  leafspine:leaves=250,spines=20,hosts=40,uplinks=20  hop=1us,sma=20us,agent=20us  ibqueryerrors"
	# The same fabric discovered with one SMP in flight (-o 1): the C
	# tool's time checks the simulator's latency against its nominal one.
	"ibnetdiscover-one      fabricsim  leafspine:leaves=250,spines=20,hosts=40,uplinks=20  hop=1us,sma=20us,agent=20us  ibnetdiscover -o 1"
	# The health check on the same fabric: discovery, two counter samples
	# 1 s apart, every LID on every switch (target: 2 s plus the 1 s).
	"ibdiagnet-latency      fabricsim  leafspine:leaves=250,spines=20,hosts=40,uplinks=20  hop=1us,sma=20us,agent=20us  ibdiagnet --no-files --checks counters,routing,credit-loops"
	# Every default check (lossy links: 10 SMPs per link) and the report files.
	"ibdiagnet-all-latency  fabricsim  leafspine:leaves=250,spines=20,hosts=40,uplinks=20  hop=1us,sma=20us,agent=20us  ibdiagnet -o bench-out"
)

RUNS=${BENCH_RUNS:-3}
work=$(mktemp -d)
pids=()
# stop_all ends what a row started, last started first (OpenSM before the
# simulator it talks to: the other way round it can hang on exit), and
# kills what has not gone within 5 s.
stop_all() {
	local i p
	for (( i=${#pids[@]}-1; i>=0; i-- )); do
		p=${pids[i]}
		kill "$p" 2>/dev/null || continue
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	pids=()
}
cleanup() {
	stop_all
	rm -rf "$work"
}
trap cleanup EXIT

if [[ ${1:-} == -l ]]; then
	for r in "${ROWS[@]}"; do read -r name _ <<<"$r"; echo "$name"; done
	echo "ibnetdiscover [a|b|sweep]..."
	echo "exporter [a|shell|b]..."
	exit 0
fi
case ${1:-} in
ibnetdiscover | exporter)
	sib=$1
	shift
	trap - EXIT
	rm -rf "$work"
	exec bash "scripts/bench/$sib.sh" "$@"
	;;
esac

PRE=$(ls /usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null | head -1 || true)
for need in ibsim opensm ibqueryerrors; do
	command -v "$need" >/dev/null || { echo "bench: $need is missing (scripts/setup-floors.sh installs it)" >&2; exit 1; }
done
[[ -n $PRE ]] || { echo "bench: libumad2sim.so is missing (ibsim-utils)" >&2; exit 1; }

go build -o "$work/ibtool" ./cmd/ibtool
have_fabricsim=0
if [[ -d cmd/fabricsim ]] && go build -o "$work/fabricsim" ./cmd/fabricsim 2>/dev/null; then
	have_fabricsim=1
fi

now() { date +%s.%N; }

# best CMD...: the least wall time of the runs of $RUNS that succeed, the
# output of the last of them in $out (stderr in $out.err). A failed run
# counts for no time; its exit status and stderr go to $out.failed, and
# when every run fails the time is "failed".
best() {
	local b="" t0 t1 d rc i
	: >"$out.failed"
	for i in $(seq "$RUNS"); do
		t0=$(now)
		rc=0
		"$@" >"$out.try" 2>"$out.try.err" || rc=$?
		t1=$(now)
		if (( rc != 0 )); then
			{ echo "run $i: exit $rc"; tail -3 "$out.try.err"; } >>"$out.failed"
			continue
		fi
		mv "$out.try" "$out"
		mv "$out.try.err" "$out.err"
		d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		if [[ -z $b ]] || awk -v d="$d" -v b="$b" 'BEGIN { exit !(d < b) }'; then b=$d; fi
	done
	if [[ -z $b ]]; then printf failed; else printf '%.3f' "$b"; fi
}

mask() { sed -E -e 's/\[(Port(Xmit|Rcv)(Data|Pkts)|Port(Unicast|Multicast)(Xmit|Rcv)Pkts) == [0-9]+ \([ 0-9.]+[KMGTPE]?B?\)\]/[\1 == N]/g' -e '/^# Topology file: generated on/d' "$1"; }

# delayed SOCK: "MADS SECONDS", the MADs fabricsim's latency model has
# delayed so far and the sum of their delays ("0 0" without fabricsim).
delayed() {
	local st
	st=$("$work/fabricsim" ctl -sockname "$1" status 2>/dev/null) || { echo "0 0"; return; }
	sed -E 's/.* ([0-9]+) MADs delayed by ([0-9.]+) s in all.*/\1 \2/' <<<"$st"
}

wait_for() { # FILE PATTERN SECONDS
	local i
	for i in $(seq $(( $3 * 10 ))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

run_row() {
	local name=$1 server=$2 topo=$3 latency=$4; shift 4
	local args=("$@")
	local dir="$work/$name" sock="bench$$-$name"
	mkdir -p "$dir"
	if [[ $server == fabricsim && $have_fabricsim == 0 ]]; then
		printf '%-24s %-10s %s\n' "$name" "$server" "skipped: cmd/fabricsim is not built yet"
		return
	fi
	if [[ -f $topo ]]; then cp "$topo" "$dir/topo"; else
		if [[ $have_fabricsim == 1 ]]; then "$work/fabricsim" gen "$topo" >"$dir/topo"
		else "$work/ibtool" --fabric "sim:$topo" ibnetdiscover >"$dir/topo"; fi
	fi
	local nodes sm host
	nodes=$(grep -cE '^(Switch|Ca|Hca|Rt)' "$dir/topo")
	mapfile -t cas < <(grep -E '^(Ca|Hca)' "$dir/topo" | sed -E 's/^[A-Za-z]+\s+[0-9]+\s+"([^"]+)".*/\1/' | head -2)
	sm=${cas[0]} host=${cas[1]}
	export IBSIM_SOCKNAME=$sock
	case $server in
	ibsim)
		local sw
		sw=$(grep -c '^Switch' "$dir/topo")
		(cd "$dir" && exec ibsim -n -s -N $((nodes + 16)) -S $((sw + 16)) -P $((nodes * 64)) topo >ibsim.log 2>&1) &
		pids+=($!)
		sleep 1
		(cd "$dir" && LD_PRELOAD=$PRE SIM_HOST=$sm OSM_CACHE_DIR=$dir OSM_TMP_DIR=$dir exec opensm -d2 -f "$dir/osm.log" >/dev/null 2>&1) &
		pids+=($!)
		wait_for "$dir/osm.log" "SUBNET UP" 600 || { echo "bench: $name: OpenSM did not bring the subnet up" >&2; return 1; }
		;;
	fabricsim)
		local lat=()
		[[ $latency != - ]] && lat=(-latency "$latency")
		"$work/fabricsim" serve -sockname "$sock" -sm "$sm" "${lat[@]}" "$dir/topo" >"$dir/fabricsim.log" 2>&1 &
		pids+=($!)
		sleep 2
		;;
	esac
	local tc tg tnom="" d0 d1 tc0
	if ! command -v "${args[0]}" >/dev/null; then
		# No C peer: ours alone (in $dir, for the files it writes).
		out="$dir/ours.out"
		tg=$(cd "$dir" && best "$work/ibtool" --fabric "ibsim:$host" "${args[@]}")
		printf '%-24s %-10s %6d nodes   C %9s   ours %8ss   (no C peer installed)\n' "$name" "$server" "$nodes" "-" "$tg"
		[[ -s $dir/ours.out.failed ]] && sed 's/^/      /' "$dir/ours.out.failed"
		[[ -s $dir/ours.out ]] && grep -E '^(Findings|Routing|Done)' "$dir/ours.out" | sed 's/^/    /'
		stop_all
		return
	fi
	out="$dir/c.out"
	d0=$(delayed "$sock")
	tc=$(cd "$dir" && best env LD_PRELOAD="$PRE" SIM_HOST="$host" "${args[@]}")
	if [[ $server == fabricsim && $latency != - && $tc != failed ]]; then
		# The nominal figure: the C tool with the latency off, plus the
		# delays its MADs were given (per run) with it on.
		d1=$(delayed "$sock")
		"$work/fabricsim" ctl -sockname "$sock" latency off >/dev/null
		out="$dir/c0.out"
		tc0=$(cd "$dir" && best env LD_PRELOAD="$PRE" SIM_HOST="$host" "${args[@]}")
		"$work/fabricsim" ctl -sockname "$sock" latency "${latency//,/ }" >/dev/null
		if [[ $tc0 != failed ]]; then
			tnom=$(awk -v t0="$tc0" -v a="${d0#* }" -v b="${d1#* }" -v ma="${d0% *}" -v mb="${d1% *}" -v r="$RUNS" \
				'BEGIN { printf "%.3f %.3f %d %.3f", t0 + (b - a) / r, t0, (mb - ma) / r, (b - a) / r }')
		fi
	fi
	out="$dir/c.out"
	out="$dir/ours.out"
	tg=$(best "$work/ibtool" --fabric "ibsim:$host" "${args[@]}")
	if [[ $tc == failed || $tg == failed ]]; then
		printf '%-24s %-10s %6d nodes   C %9s   ours %9s   no ratio: every run failed\n' "$name" "$server" "$nodes" "$tc" "$tg"
	else
		local same=no
		if diff -q <(mask "$dir/c.out") <(mask "$dir/ours.out") >/dev/null; then same=yes; fi
		printf '%-24s %-10s %6d nodes   C %8.3fs   ours %8.3fs   %6.1fx   same output: %s\n' \
			"$name" "$server" "$nodes" "$tc" "$tg" "$(awk -v c="$tc" -v g="$tg" 'BEGIN { print c / g }')" "$same"
		if [[ -n $tnom ]]; then
			local nom t0 mads dsum
			read -r nom t0 mads dsum <<<"$tnom"
			printf '%-24s %-10s %6s         C at nominal latency %8.3fs (%.3f s without latency + %d MADs delayed %.3f s in all; measured %.2fx that)   %6.1fx\n' \
				"" "" "" "$nom" "$t0" "$mads" "$dsum" "$(awk -v c="$tc" -v n="$nom" 'BEGIN { print c / n }')" "$(awk -v n="$nom" -v g="$tg" 'BEGIN { print n / g }')"
		fi
		if [[ $same == no ]]; then
			{ diff <(mask "$dir/c.out") <(mask "$dir/ours.out") || true; } | head -8 | sed 's/^/    /'
			tail -3 "$dir/c.out.err" "$dir/ours.out.err" | sed 's/^/    /'
		fi
	fi
	local who
	for who in c ours; do
		if [[ -s $dir/$who.out.failed ]]; then
			echo "    failed runs of $who (not timed):"
			sed 's/^/      /' "$dir/$who.out.failed"
		fi
	done
	stop_all
}

want=("$@")
for r in "${ROWS[@]}"; do
	read -r name server topo latency rest <<<"$r"
	if (( ${#want[@]} )) && [[ " ${want[*]} " != *" $name "* ]]; then continue; fi
	read -r -a args <<<"$rest"
	run_row "$name" "$server" "$topo" "$latency" "${args[@]}"
done
(( $# )) || bash scripts/bench/ibnetdiscover.sh # ibnetdiscover: rows (a), (b), (c) of its own, run when no row is named
(( $# )) || bash scripts/bench/exporter.sh      # the exporter: rows (a), shell-out and (b) of its own
