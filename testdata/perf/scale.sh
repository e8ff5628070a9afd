#!/usr/bin/env bash
# scale.sh: the workbench with 1,000 subagents against 200, measured in the same run (issue 29
# item 10: UI ≤ 20 % of a core while 1,000 stream an aggregate 50 k tokens/s, View p99 ≤ 3 ms,
# keystroke ≤ 1 ms, memory under 1 GB).
#
# Two parts, each alternating the sizes so a noisy machine hits both alike, medians of RUNS:
#
# 1. The ui package's benchmarks (go test -bench, headless: the model driven as the program
#    drives it, events folded a frame at a time at 50 k tokens/s, 200×60, the spinner's tick
#    every 120 ms of a simulated clock). From BenchmarkFrameBusy: View's p50 and p99 on the
#    thread's CPU clock (view_cpu_p50/p99, ms) and on the wall clock (view_p50/p99, ms: on a
#    shared machine another process's time slice falls inside 1 frame in 100, so the wall p99
#    is the scheduler's), fold+render as % of one core (fold_render_cpu, process CPU clock).
#    From BenchmarkKeystroke: a key's Update and View, CPU p50 (ms), typed into the input while
#    all stream (key_input) and moving in a tree grouped by agent type (key_tree_grouped).
#
# 2. The live workbench (testdata/perf/live.sh, one run per size and round): summit with
#    script tapes in tmux at 200×60, N subagents each streaming 50000/N words/s after a wait
#    (DELAY), started from one tmux command file (the N /delegate lines pasted and entered in a
#    burst). Its metrics:
#    ui_cpu (View and Bubble Tea's screen update from a CPU profile, % of one core over the
#    streaming), busy_cpu (the whole process while all N stream), key_ms (CPU per key typed
#    while idle), rss_mb (peak resident set), start_s (first /delegate to all N running),
#    lateness, idle_cpu (see live.sh).
#
# Usage: testdata/perf/scale.sh [BIN]   (default: builds ./cmd/summit)
#   RUNS=3 SECS=60 DELAY=75 BUSY=20 IDLE=10 BENCHTIME=2s are read from the environment. Each
#   subagent waits DELAY seconds before it streams SECS seconds: starting 1,000 while the first
#   ones already stream took 36 s to over 90 s on a 2-core machine at a load of 10, so that the
#   first ended before the last began; with the wait they start while nothing streams, and the
#   BUSY seconds of busy samples see all N streaming. LIVE=0 skips part 2, BENCH=0 part 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3} SECS=${SECS:-60} DELAY=${DELAY:-75} BUSY=${BUSY:-20} IDLE=${IDLE:-10} BENCHTIME=${BENCHTIME:-2s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
touch "$tmp/results"

if [ "${BENCH:-1}" != 0 ]; then
	echo "scale.sh: benchmarks, -count $RUNS" >&2
	# -count runs BenchmarkFrameBusy (both sizes) RUNS times, then BenchmarkKeystroke: the sizes
	# alternate inside each round.
	go test -run '^$' -bench 'BenchmarkFrameBusy$|BenchmarkKeystroke$/./^(streaming|tree-grouped)$' -benchtime "$BENCHTIME" -count "$RUNS" ./ui |
		tee "$tmp/bench.txt" |
		awk '/^BenchmarkFrameBusy\/subagents=/ {
				split($1, a, "[=-]"); n = a[2]
				for (i = 3; i < NF; i++) {
					if ($(i+1) == "view-cpu-p50-ms") print n, "view_cpu_p50", $i
					if ($(i+1) == "view-cpu-p99-ms") print n, "view_cpu_p99", $i
					if ($(i+1) == "view-p50-ms") print n, "view_p50", $i
					if ($(i+1) == "view-p99-ms") print n, "view_p99", $i
					if ($(i+1) == "fold+render-cpu%") print n, "fold_render_cpu", $i
				}
			}
			/^BenchmarkKeystroke\/subagents=/ {
				split($1, a, "[=/-]"); n = a[3]; mode = a[4] == "tree" ? "key_tree_grouped" : "key_input"
				for (i = 3; i < NF; i++) if ($(i+1) == "cpu-p50-ms") print n, mode, $i
			}' >>"$tmp/results"
fi

if [ "${LIVE:-1}" != 0 ]; then
	bin=${1:-}
	if [ -z "$bin" ]; then
		go build -o "$tmp/summit" ./cmd/summit
		bin=$tmp/summit
	fi
	live=(busy_cpu ui_cpu view_cpu flush_cpu lateness idle_cpu idle_wake key_ms rss_mb start_s)
	for ((r = 1; r <= RUNS; r++)); do
		for n in 200 1000; do
			echo "scale.sh: live run $r, N=$n" >&2
			# live.sh's table: a header, then one row: the binary's name and the metrics' medians.
			N=$n RATE=$((50000 / n)) SECS=$SECS DELAY=$DELAY BUSY=$BUSY IDLE=$IDLE RUNS=1 testdata/perf/live.sh "$bin" |
				awk -v n="$n" -v ms="${live[*]}" '$1 == "binary" {split(ms, m, " "); hdr = 1; next}
					hdr { for (i = 2; i <= NF; i++) print n, m[i-1], $i }' >>"$tmp/results"
		done
	done
fi

echo "1,000 against 200 subagents, 50 k tokens/s in all, 200×60; medians of $RUNS runs each (load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-18s %10s %10s %8s\n' metric N=200 N=1000 ratio
for m in view_cpu_p50 view_cpu_p99 view_p50 view_p99 fold_render_cpu key_input key_tree_grouped \
	ui_cpu view_cpu flush_cpu busy_cpu key_ms rss_mb start_s lateness idle_cpu; do
	grep -q " $m " "$tmp/results" || continue
	a=$(awk -v m="$m" '$1 == 200 && $2 == m {print $3}' "$tmp/results" | median)
	b=$(awk -v m="$m" '$1 == 1000 && $2 == m {print $3}' "$tmp/results" | median)
	printf '%-18s %10s %10s %8s\n' "$m" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {if (a + 0 == 0) print "-"; else printf "%.2f", b / a}')"
done
