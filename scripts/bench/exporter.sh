#!/usr/bin/env bash
# Exporter benchmark: ibfabric_exporter scraping a fabricsim fabric with
# latency (--fabric ibsim), beside the shell-out approach of the existing
# exporters (`ibnetdiscover --ports`, then `perfquery -x` per node, 1
# and then 4 at a time, the C tools through libumad2sim) on the same
# fabric.
#
#   (a) the 10,270-node leaf-spine of bench.sh's latency row, hop 1 us,
#       SMA 20 us, agent 20 us: a scrape of ours (target: at most 1 s)
#       and the shell-out scrape, 1 and 4 at a time (target: ours at
#       least 50 times faster);
#   (b) the largest leaf-spine whose end ports all get a LID (44,800 CAs
#       and 1,800 switches, 46,600 nodes, 134,400 ports), same latency:
#       a scrape of ours (target: at most 5 s and 300 MB).
#
# Ours: median and range of $BENCH_SCRAPES scrapes (default 5) with curl
# (uncompressed), one exporter process that discovered the fabric first;
# wall time per scrape, CPU the exporter spent on it, MADs it sent (its own
# ibfabric_scrape_mads_sent), series and bytes served, and its peak RSS
# over the whole run (VmHWM: discovery and every scrape; and after the
# discovery alone). Shell-out: one
# run each (the 1-at-a-time one takes minutes), the MADs its perfquery
# calls send (one ClassPortInfo and one PortCountersExtended per port).
#
# Usage: scripts/bench/exporter.sh [a|b|shell]...   (default: a shell b)
# The shell-out reads PortCountersExtended only (perfquery -x): where the
# PMA has no 64-bit error counters (fabricsim's, like ibsim's, has none)
# that leaves out the error counters, which ours reads from PortCounters:
# one MAD a port for it (and a ClassPortInfo per call), two for ours.
#
# Environment: BENCH_SCRAPES, BENCH_LATENCY, BENCH_A, BENCH_B (fabricsim
# generator specs), BENCH_SHELL_PAR (default "1 4").
# Needs infiniband-diags and libumad2sim (scripts/setup-floors.sh), curl.
set -euo pipefail
cd "$(dirname "$0")/../.."

SCRAPES=${BENCH_SCRAPES:-5}
LATENCY=${BENCH_LATENCY:-hop=1us,sma=20us,agent=20us}
A=${BENCH_A:-leafspine:leaves=250,spines=20,hosts=40,uplinks=20}
B=${BENCH_B:-leafspine:leaves=1400,spines=400,hosts=32,uplinks=16}
PAR=${BENCH_SHELL_PAR:-1 4}
HOST=hca2 # the exporter and the C tools attach here; the SM runs on hca1
nodes=0

PRE=$(ls /usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null | head -1 || true)
for need in ibnetdiscover perfquery curl; do
	command -v "$need" >/dev/null || { echo "bench: $need is missing (scripts/setup-floors.sh installs it)" >&2; exit 1; }
done
[[ -n $PRE ]] || { echo "bench: libumad2sim.so is missing (ibsim-utils)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
stop_all() {
	local i j p
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		p=${pids[i]}
		if kill "$p" 2>/dev/null; then
			for ((j = 0; j < 100; j++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
			kill -9 "$p" 2>/dev/null || true
		fi
		wait "$p" 2>/dev/null || true
	done
	pids=()
}
cleanup() { stop_all; rm -rf "$work"; }
trap cleanup EXIT

CGO_ENABLED=0 go build -o "$work/ibfabric_exporter" ./cmd/ibfabric_exporter
go build -o "$work/fabricsim" ./cmd/fabricsim

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
wait_for() { # FILE PATTERN SECONDS
	local i
	for ((i = 0; i < $3 * 10; i++)); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # utime + stime, in clock ticks
hz=$(getconf CLK_TCK)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

# start_fabricsim TOPOLOGY-SPEC NAME: serve the fabric (IBSIM_SOCKNAME set
# for the clients), its node count in $nodes.
start_fabricsim() {
	"$work/fabricsim" gen "$1" >"$work/$2.topo"
	export IBSIM_SOCKNAME=benchx$$$2
	"$work/fabricsim" serve -sockname "$IBSIM_SOCKNAME" -sm hca1 -latency "$LATENCY" -max-clients 64 "$work/$2.topo" >"$work/$2.fabricsim.log" 2>&1 &
	pids+=($!)
	wait_for "$work/$2.fabricsim.log" "serving" 600 || { echo "bench: fabricsim did not start:" >&2; cat "$work/$2.fabricsim.log" >&2; exit 1; }
	nodes=$(grep -cE '^(Switch|Ca|Rt)' "$work/$2.topo")
}

# ours NAME NODES: start the exporter, wait for its discovery, scrape
# $SCRAPES times; print the row.
ours() {
	local name=$1 nodes=$2 port ex i c0 c1 t lines bytes mads
	port=$((20000 + RANDOM % 20000))
	"$work/ibfabric_exporter" --fabric "ibsim:$HOST" --web.listen-address "127.0.0.1:$port" \
		--scrape-timeout 60s --topology.refresh-interval 1h >"$work/$name.ex.log" 2>&1 &
	ex=$!
	pids+=($ex)
	wait_for "$work/$name.ex.log" "topology discovered" 600 || { echo "bench: the exporter did not discover the fabric:" >&2; cat "$work/$name.ex.log" >&2; exit 1; }
	local discover dhwm
	discover=$(sed -n 's/.*msg="topology discovered".* took=\([^ ]*\).*/\1/p' "$work/$name.ex.log" | head -1)
	dhwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$ex/status")
	: >"$work/$name.walls"; : >"$work/$name.cpus"; : >"$work/$name.mads"
	for ((i = 0; i < SCRAPES; i++)); do
		c0=$(cpu_ticks "$ex")
		t=$(curl -s -o "$work/$name.metrics" -w '%{time_total}' "http://127.0.0.1:$port/metrics")
		c1=$(cpu_ticks "$ex")
		echo "$t" >>"$work/$name.walls"
		calc %.2f "($c1 - $c0) / $hz" >>"$work/$name.cpus"; echo >>"$work/$name.cpus"
		sed -n 's/^ibfabric_scrape_mads_sent //p' "$work/$name.metrics" >>"$work/$name.mads"
	done
	lines=$(grep -vc '^#' "$work/$name.metrics")
	bytes=$(stat -c %s "$work/$name.metrics")
	local up unreachable hwm
	up=$(awk '/^ibfabric_node_up\{/ { s += $2 } END { print s }' "$work/$name.metrics")
	unreachable=$(sed -n 's/^ibfabric_scrape_nodes_unreachable //p' "$work/$name.metrics")
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$ex/status")
	printf '%-44s %6d nodes  wall %6.3fs (%s)  CPU %5.2fs  %7d MADs  %8d series %4d MB  RSS %4d MB (%d MB after discovery)  up %d, unreachable %s, discovery %s\n' \
		"$name" "$nodes" "$(median <"$work/$name.walls")" "$(range <"$work/$name.walls")" "$(median <"$work/$name.cpus")" \
		"$(median <"$work/$name.mads")" "$lines" $((bytes >> 20)) $((hwm >> 10)) $((dhwm >> 10)) "$up" "$unreachable" "$discover"
	kill "$ex"
	for ((i = 0; i < 100; i++)); do kill -0 "$ex" 2>/dev/null || break; sleep 0.1; done
	wait "$ex" 2>/dev/null || echo "bench: the exporter exited $? on SIGTERM" >&2
	echo "$(median <"$work/$name.walls")" >"$work/$name.wall"
}

# shell NAME NODES PAR: ibnetdiscover --ports, then perfquery -x for
# every node, PAR at a time, as the shell-out exporters scrape: a switch's
# ports in one call (-l LID 255), each CA port in one.
shell() {
	local name=$1 nodes=$2 par=$3 t0 t1 c0 c1
	mkdir -p "$work/sh"
	c0=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
	t0=$(now)
	(cd "$work/sh" && LD_PRELOAD=$PRE SIM_HOST=$HOST timeout 600 ibnetdiscover --ports >"$work/$name.ports" 2>"$work/$name.ports.err") || true
	awk '$1 == "SW" && !sw[$2]++ { print "-l", $2, 255 } $1 == "CA" && !ca[$2 " " $3]++ { print $2, $3 }' \
		"$work/$name.ports" >"$work/$name.calls"
	(cd "$work/sh" && xargs -P "$par" -L 1 timeout 120 env LD_PRELOAD="$PRE" SIM_HOST=$HOST perfquery -x \
		<"$work/$name.calls" >"$work/$name.out" 2>"$work/$name.err") || true
	t1=$(now)
	c1=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
	local ports fails
	ports=$(grep -c '^# Port extended counters' "$work/$name.out" || true)
	fails=$(grep -c 'iberror\|ibwarn' "$work/$name.err" || true)
	printf '%-44s %6d nodes  wall %6.1fs  CPU %6.1fs (all processes)  %6d perfquery calls, %6d ports read, %d errors\n' \
		"$name" "$nodes" "$(calc %.3f "$t1 - $t0")" "$(calc %.1f "($c1 - $c0) / $hz")" "$(wc -l <"$work/$name.calls")" "$ports" "$fails"
	calc %.3f "$t1 - $t0" >"$work/$name.wall"
}

row_a() {
	start_fabricsim "$A" a
	ours "(a) ours, $A" "$nodes"
	cp "$work/(a) ours, $A.wall" "$work/a.ours.wall"
	stop_all
}

row_shell() {
	local p
	start_fabricsim "$A" s
	for p in $PAR; do
		shell "(a) shell-out, $p at a time" "$nodes" "$p"
		if [[ -f $work/a.ours.wall ]]; then
			echo "    ours is $(calc %.1f "$(cat "$work/(a) shell-out, $p at a time.wall") / $(cat "$work/a.ours.wall")")x faster"
		fi
	done
	stop_all
}

row_b() {
	start_fabricsim "$B" b
	ours "(b) ours, $B" "$nodes"
	stop_all
}

want=("$@")
((${#want[@]})) || want=(a shell b)
echo "ibfabric_exporter: scrapes against fabricsim ($LATENCY), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for w in "${want[@]}"; do
	case $w in
	a) row_a ;;
	shell) row_shell ;;
	b) row_b ;;
	*) echo "bench: unknown row $w (a, b or shell)" >&2; exit 2 ;;
	esac
done
