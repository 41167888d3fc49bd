#!/usr/bin/env bash
# ibnetdiscover benchmark: the C ibnetdiscover (infiniband-diags, through
# libumad2sim) and `ibtool ibnetdiscover` (its own ibsim protocol client,
# --fabric ibsim) discover the same simulated fabric; each row prints wall
# time (best of the runs), MADs, peak RSS and the ratio C/ours.
#
#   (a) ibsim 0.10 + OpenSM, a 3-level fat tree of 2160 nodes, no latency
#       (target: ours at most 1.0x the C wall time);
#   (b) fabricsim with latency (hop 5 us, SMA 20 us, 16 requests queued
#       per SMA) on a 10,270-node leaf-spine (target: ours 10x faster);
#       (b0) the same fabric with the latency off: the CPU floor;
#   (c) the lower bound for (b): max(critical path, MADs x round trip /
#       in-flight limit, busiest SMA's SMPs x SMA time), with the nominal
#       round trip and with the effective one (C's wall x 2 / its MADs:
#       the C tool keeps 2 SMPs in flight), and ours as a multiple of it.
#
# Usage: scripts/bench/ibnetdiscover.sh [a|b|sweep]...   (default: a b)
#   sweep: ours alone on (b) for -o 8..256 and --per_node_smps 1..8.
# Environment: BENCH_RUNS (ours, default 5), BENCH_C_RUNS (C on (a),
# default 5; on (b) always 1: it takes half a minute), BENCH_FT,
# BENCH_BIG, BENCH_LATENCY (fabricsim generator specs and latency).
# Needs ibsim, opensm, infiniband-diags, libumad2sim (scripts/setup-floors.sh)
# and GNU time for the RSS (without it RSS shows "-").
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${BENCH_RUNS:-5}
C_RUNS=${BENCH_C_RUNS:-5}
FT=${BENCH_FT:-fattree:k=12,n=3}
BIG=${BENCH_BIG:-leafspine:leaves=250,spines=20,hosts=40,uplinks=20}
LATENCY=${BENCH_LATENCY:-hop=5us,sma=20us,queue=16}
HOST=hca2 # discovery starts here; the SM runs on hca1

PRE=$(ls /usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null | head -1 || true)
for need in ibsim opensm ibnetdiscover; do
	command -v "$need" >/dev/null || { echo "bench: $need is missing (scripts/setup-floors.sh installs it)" >&2; exit 1; }
done
[[ -n $PRE ]] || { echo "bench: libumad2sim.so is missing (ibsim-utils)" >&2; exit 1; }
TIME=/usr/bin/time
[[ -x $TIME ]] || TIME=

work=$(mktemp -d)
pids=()
# stop_servers: newest first (OpenSM before the ibsim it talks to, or it
# hangs), TERM, then KILL after 5 s.
stop_servers() {
	local i j p
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		p=${pids[i]}
		if kill "$p" 2>/dev/null; then
			for ((j = 0; j < 50; j++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
			kill -9 "$p" 2>/dev/null || true
		fi
		wait "$p" 2>/dev/null || true
	done
	pids=()
}
cleanup() { stop_servers; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/ibtool" ./cmd/ibtool
go build -o "$work/fabricsim" ./cmd/fabricsim

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

# measure NAME CMD...: runs CMD with stdout to $work/NAME.out and records
# its wall time (s) and peak RSS (KB) in $work/NAME.t
measure() {
	local name=$1 t0 t1 rss=-
	shift
	t0=$(now)
	if [[ -n $TIME ]]; then
		"$TIME" -f '%M' -o "$work/$name.rss" "$@" >"$work/$name.out" 2>"$work/$name.err" || true
		rss=$(tail -1 "$work/$name.rss")
	else
		"$@" >"$work/$name.out" 2>"$work/$name.err" || true
	fi
	t1=$(now)
	echo "$(calc %.3f "$t1 - $t0") $rss" >"$work/$name.t"
}

# try NAME CMD...: one run; $work/NAME.{t,out} keep the fastest so far.
try() {
	local name=$1
	shift
	if [[ ! -f $work/$name.t ]]; then
		measure "$name" "$@"
		return
	fi
	measure "$name.try" "$@"
	if awk -v a="$(cut -d' ' -f1 "$work/$name.try.t")" -v b="$(cut -d' ' -f1 "$work/$name.t")" 'BEGIN { exit !(a < b) }'; then
		mv "$work/$name.try.t" "$work/$name.t"
		mv "$work/$name.try.out" "$work/$name.out"
	fi
}

# pair ROW CRUNS: the C tool and ours discover in turn (so that both see
# the same load on a shared machine), C CRUNS times and ours $RUNS times;
# the fastest run of each is kept as ROW.c and ROW.ours.
pair() {
	local row=$1 cruns=$2 i
	rm -f "$work/$row".*
	for ((i = 0; i < RUNS || i < cruns; i++)); do
		((i < cruns)) && try "$row.c" env LD_PRELOAD="$PRE" SIM_HOST=$HOST ibnetdiscover -m
		((i < RUNS)) && try "$row.ours" "$work/ibtool" --fabric "ibsim:$HOST" ibnetdiscover -m
	done
}

wall() { cut -d' ' -f1 "$work/$1.t"; }
rss() { local k; k=$(cut -d' ' -f2 "$work/$1.t"); [[ $k == - ]] && echo - || calc '%.0f MB' "$k / 1024"; }
mads() { sed -n 's/^# Total MADs used: //p' "$work/$1.out"; }
hops() { sed -n 's/^# Reported max hops discovered: //p' "$work/$1.out"; }
body() { grep -v '^# \(Topology file: generated on\|Reported max hops\|Total MADs\)' "$work/$1.out"; }

# ours_stats: queries, SMPs sent and the peak in flight from --json.
ours_stats() {
	"$work/ibtool" --fabric "ibsim:$HOST" --json ibnetdiscover "$@" 2>/dev/null | tr -d ' \n' |
		grep -o '"stats":{[^}]*}' | sed -E 's/.*"queries":([0-9]+).*"sent":([0-9]+).*"peak_in_flight":([0-9]+).*/\1 \2 \3/'
}

compare() { # C-run ours-run: identical text, or the same lines in another order
	if cmp -s <(body "$1") <(body "$2"); then echo identical
	elif cmp -s <(body "$1" | sort) <(body "$2" | sort); then echo "same lines, other order"
	else echo DIFFERENT; fi
}

header() {
	printf '%-34s %6s  %9s %7s %6s  %9s %13s %6s  %7s  %s\n' row nodes "C wall" "C MADs" "C RSS" "ours" "MADs (sent)" "RSS" "C/ours" output
}
row() { # label nodes c-run ours-run sent
	printf '%-34s %6d  %8.3fs %7s %6s  %8.3fs %13s %6s  %6.2fx  %s\n' "$1" "$2" \
		"$(wall "$3")" "$(mads "$3")" "$(rss "$3")" "$(wall "$4")" "$(mads "$4") ($5)" "$(rss "$4")" \
		"$(calc %.4f "$(wall "$3") / $(wall "$4")")" "$(compare "$3" "$4")"
}

wait_for() { # FILE PATTERN SECONDS
	local i
	for ((i = 0; i < $3 * 10; i++)); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

gen() { "$work/fabricsim" gen "$1" >"$work/$2.topo"; grep -cE '^(Switch|Ca|Rt)' "$work/$2.topo"; }

row_a() {
	local nodes sw
	nodes=$(gen "$FT" ft)
	sw=$(grep -c '^Switch' "$work/ft.topo")
	export IBSIM_SOCKNAME=bench$$a
	(cd "$work" && exec ibsim -n -s -N $((nodes + 16)) -S $((sw + 16)) -P $((nodes * 64)) ft.topo >ibsim.log 2>&1) &
	pids+=($!)
	sleep 1
	(cd "$work" && LD_PRELOAD=$PRE SIM_HOST=hca1 OSM_CACHE_DIR=$work OSM_TMP_DIR=$work exec opensm -d2 -f "$work/osm.log" >/dev/null 2>&1) &
	pids+=($!)
	wait_for "$work/osm.log" "SUBNET UP" 300 || { echo "bench: OpenSM did not bring the subnet up" >&2; exit 1; }
	pair a "$C_RUNS"
	local st
	read -r _ st _ < <(ours_stats)
	row "(a) ibsim, fat tree $FT" "$nodes" a.c a.ours "$st"
	stop_servers
}

start_fabricsim() { # topology-name latency
	export IBSIM_SOCKNAME=bench$$b
	local lat=()
	[[ $2 != - ]] && lat=(-latency "$2")
	"$work/fabricsim" serve -sockname "$IBSIM_SOCKNAME" -sm hca1 "${lat[@]}" "$work/$1.topo" >"$work/fabricsim.log" 2>&1 &
	pids+=($!)
	wait_for "$work/fabricsim.log" "serving" 120 || { echo "bench: fabricsim did not start:" >&2; cat "$work/fabricsim.log" >&2; exit 1; }
}
ctl() { "$work/fabricsim" ctl -sockname "$IBSIM_SOCKNAME" "$@" >/dev/null; }

row_b() {
	local nodes q st peak
	nodes=$(gen "$BIG" big)
	start_fabricsim big "$LATENCY"
	pair b 1
	read -r q st peak < <(ours_stats)
	row "(b) fabricsim $LATENCY" "$nodes" b.c b.ours "$st"
	ctl latency off
	pair b0 1
	row "(b0) the same, latency off" "$nodes" b0.c b0.ours "$(ours_stats | cut -d' ' -f2)"
	stop_servers
	bound "$q" "$peak"
}

# bound QUERIES INFLIGHT: row (c) from the topology, the latency model and
# the (b) measurements.
bound() {
	local q=$1 inflight=$2 depth hop sma busiest
	depth=$(hops b.c)
	hop=$(sed -n 's/.*hop=\([0-9.]*\)us.*/\1/p' <<<"$LATENCY")
	sma=$(sed -n 's/.*sma=\([0-9.]*\)us.*/\1/p' <<<"$LATENCY")
	# The busiest SMA: a switch answers NodeInfo, NodeDescription,
	# SwitchInfo and PortInfo of ports 0..N, plus a NodeInfo probe from
	# every switch cabled to it.
	busiest=$(awk '
		/^Switch/ { sw[$3] = $2 }
		/^(Switch|Ca|Hca|Rt)/ { cur = $3; next }
		/^\[/ { if (match($0, /"[^"]+"\[/)) { peer = substr($0, RSTART, RLENGTH - 1); link[cur] = link[cur] " " peer } }
		END {
			m = 0
			for (s in sw) { n = split(link[s], l, " "); k = 0; for (i = 1; i <= n; i++) if (l[i] in sw) k++; v = 3 + sw[s] + 1 + k; if (v > m) m = v }
			print m
		}' "$work/big.topo")
	awk -v d="$depth" -v hop="$hop" -v sma="$sma" -v q="$q" -v f="$inflight" -v busy="$busiest" \
		-v cw="$(wall b.c)" -v cm="$(mads b.c)" -v ours="$(wall b.ours)" -v floor="$(wall b0.ours)" 'BEGIN {
		# Nominal round trip to depth k: 2k hops and one SMA; the walk
		# chains a NodeInfo and a PortInfo per level (levels 0..d).
		crit = 0; sum = 0
		for (k = 0; k <= d; k++) { rt = (2 * k * hop + sma) / 1e6; crit += 2 * rt }
		mean = (2 * d * hop + sma) / 1e6
		wire = q * mean / f
		sm = busy * sma / 1e6
		b = crit; if (wire > b) b = wire; if (sm > b) b = sm
		printf "(c) lower bound for (b), depth %d, %d queries, in-flight limit %d:\n", d, q, f
		printf "    nominal RTT %.0f us: critical path %.2f ms, MADs x RTT / in-flight %.1f ms, busiest SMA %d x %g us = %.1f ms -> bound %.3f s; ours = %.0fx the bound\n", mean * 1e6, crit * 1e3, wire * 1e3, busy, sma, sm * 1e3, b, ours / b
		eff = cw * 2 / cm
		ecrit = crit / mean * eff; ewire = q * eff / f
		eb = ecrit; if (ewire > eb) eb = ewire; if (sm > eb) eb = sm
		printf "    effective RTT %.0f us (C wall x 2 / C MADs): critical path %.1f ms, MADs x RTT / in-flight %.3f s -> bound %.3f s; ours = %.1fx the bound\n", eff * 1e6, ecrit * 1e3, ewire, eb, ours / eb
		printf "    CPU floor (ours, latency off, row b0) %.3f s; ours = %.2fx the floor\n", floor, ours / floor
	}'
}

sweep() {
	local o pn nodes i
	nodes=$(gen "$BIG" big)
	start_fabricsim big "$LATENCY"
	echo "ours on (b), $nodes nodes, $LATENCY: fastest of $RUNS runs"
	for o in 8 16 32 64 128 256; do
		for pn in 1 2 4 8; do
			rm -f "$work/s.$o.$pn".*
			for ((i = 0; i < RUNS; i++)); do
				try "s.$o.$pn" "$work/ibtool" --fabric "ibsim:$HOST" ibnetdiscover -o "$o" --per_node_smps "$pn"
			done
			printf -- '-o %-4d --per_node_smps %-3d %8.3fs\n' "$o" "$pn" "$(wall "s.$o.$pn")"
		done
	done
	stop_servers
}

want=("$@")
((${#want[@]})) || want=(a b)
echo "ibnetdiscover: C (infiniband-diags $(dpkg-query -W -f '${Version}' infiniband-diags 2>/dev/null || echo '?'), libumad2sim) vs ibtool (--fabric ibsim); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for w in "${want[@]}"; do
	case $w in
	a) header; row_a ;;
	b) header; row_b ;;
	sweep) sweep ;;
	*) echo "bench: unknown row $w (a, b or sweep)" >&2; exit 2 ;;
	esac
done
