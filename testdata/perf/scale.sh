#!/usr/bin/env bash
# scale.sh: the live workbench with 1,000 subagents against 200, measured in the same run
# (issue 29 item 10: UI ≤ 20 % of a core while 1,000 stream an aggregate 50 k tokens/s,
# keystroke ≤ 1 ms, memory under 1 GB).
#
# It runs live.sh (same fixture, same metrics: busy_cpu, ui_cpu, view_cpu, flush_cpu,
# lateness, idle_cpu, idle_wake, key_ms, rss_mb) on one binary with N=200 and N=1000
# subagents, alternating, RUNS times each (one live.sh run per measurement, so a noisy machine
# hits both alike), with the aggregate rate held at 50 k tokens/s (RATE = 50000/N words/s per
# subagent). It prints each metric's median for both sizes and the ratio 1000/200.
#
# Usage: testdata/perf/scale.sh [BIN]   (default: builds ./cmd/summit)
#   RUNS=3 SECS=90 IDLE=10 are read from the environment (SECS and IDLE go to live.sh;
#   SECS is long enough that the first of 1,000 pasted /delegate lines still streams when the
#   last one starts, as live.sh waits for all N running: on a 2-core machine at a load of 40,
#   pasting 200 lines took over 30 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3} SECS=${SECS:-90} IDLE=${IDLE:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$tmp/summit" ./cmd/summit
	bin=$tmp/summit
fi
metrics=(busy_cpu ui_cpu view_cpu flush_cpu lateness idle_cpu idle_wake key_ms rss_mb)
for ((r = 1; r <= RUNS; r++)); do
	for n in 200 1000; do
		echo "scale.sh: run $r, N=$n" >&2
		# live.sh's table: a header, then one row: the binary's name and the metrics' medians.
		N=$n RATE=$((50000 / n)) SECS=$SECS IDLE=$IDLE RUNS=1 testdata/perf/live.sh "$bin" |
			awk -v n="$n" -v ms="${metrics[*]}" '$1 == "binary" {split(ms, m, " "); hdr = 1; next}
				hdr { for (i = 2; i <= NF; i++) print n, m[i-1], $i }' >>"$tmp/results"
	done
done
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "1,000 against 200 subagents, 50 k tokens/s in all, ${SECS}s at 200×60; medians of $RUNS runs each"
printf '%-10s %10s %10s %8s\n' metric N=200 N=1000 ratio
for m in "${metrics[@]}"; do
	a=$(awk -v m="$m" '$1 == 200 && $2 == m {print $3}' "$tmp/results" | median)
	b=$(awk -v m="$m" '$1 == 1000 && $2 == m {print $3}' "$tmp/results" | median)
	printf '%-10s %10s %10s %8s\n' "$m" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {if (a + 0 == 0) print "-"; else printf "%.2f", b / a}')"
done
