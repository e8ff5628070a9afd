#!/usr/bin/env bash
# measure.sh: how fast `summit inspect` and `summit replay --print` read big recordings,
# against `wc -l` (the floor: reading the file) and `jq -c .` (a generic JSON reader), on
# generated recordings of 128, 512 and 1024 MB (testdata/perf/gen.go), in one run so that the
# ratios compare like with like on a shared, noisy machine.
#
#   testdata/perf/measure.sh                  # all sizes, 5 runs each
#   SIZES="128 512" RUNS=3 testdata/perf/measure.sh
#   JQ_RUNS=1 testdata/perf/measure.sh        # jq is slow: fewer runs of it (0: none)
#   SUMMIT=/tmp/summit-head testdata/perf/measure.sh   # another build (e.g. the last commit's)
#
# For every size it runs, RUNS times and interleaved (wc, inspect, print, jq, wc, ...), each
# command with its output to /dev/null, and reports the median wall time, its ratio to the
# median of `wc -l`, and the largest peak RSS seen. Wall time is taken with date +%s%N; peak
# RSS with /usr/bin/time (%M) when it is there, else by polling VmHWM in /proc/PID/status
# (coarser: a peak between two polls is missed). The recordings are generated once into
# $PERF_DIR (default /tmp/summit-perf/readers) and reused; the page cache is warmed by a first
# untimed `cat` of each file, so the figures are for a file in the page cache.
set -euo pipefail

cd "$(dirname "$0")/../.."
SIZES=${SIZES:-"128 512 1024"}
RUNS=${RUNS:-5}
JQ_RUNS=${JQ_RUNS:-$RUNS}
PERF_DIR=${PERF_DIR:-/tmp/summit-perf/readers}
mkdir -p "$PERF_DIR"

if [[ -z "${SUMMIT:-}" ]]; then
	SUMMIT="$PERF_DIR/summit"
	go build -o "$SUMMIT" ./cmd/summit
fi
HAVE_TIME=0
[[ -x /usr/bin/time ]] && HAVE_TIME=1
HAVE_JQ=0
command -v jq >/dev/null && HAVE_JQ=1

# run NAME CMD...: runs CMD once, output to /dev/null; appends "seconds rss_kb" to
# $PERF_DIR/NAME.times.
run() {
	local name=$1
	shift
	local rssf="$PERF_DIR/rss.$$" start end rss
	start=$(date +%s%N)
	if ((HAVE_TIME)); then
		/usr/bin/time -o "$rssf" -f %M "$@" >/dev/null 2>"$PERF_DIR/stderr.$$" || {
			echo "failed: $* (see $PERF_DIR/stderr.$$)" >&2
			exit 1
		}
		end=$(date +%s%N)
		rss=$(tail -n 1 "$rssf")
	else
		"$@" >/dev/null 2>"$PERF_DIR/stderr.$$" &
		local pid=$! peak=0 v
		while kill -0 "$pid" 2>/dev/null; do
			v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
			[[ -n "$v" && "$v" -gt "$peak" ]] && peak=$v
			sleep 0.005
		done
		wait "$pid" || {
			echo "failed: $*" >&2
			exit 1
		}
		end=$(date +%s%N)
		rss=$peak
	fi
	echo "$(((end - start) / 1000)) $rss" >>"$PERF_DIR/$name.times"
}

# median FILE: the median of the first column (microseconds), in seconds.
median() {
	sort -n "$1" | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.3f", m / 1e6}'
}
maxrss() { sort -n -k2 "$1" | tail -n 1 | awk '{printf "%d", $2 / 1024}'; }

echo "summit: $SUMMIT ($("$SUMMIT" version 2>/dev/null | head -n 1))"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); runs: $RUNS (jq: $JQ_RUNS)"
((HAVE_TIME)) || echo "peak RSS: /usr/bin/time not found, polling /proc/PID/status VmHWM"
((HAVE_JQ)) || echo "jq: not installed, not measured"
printf '\n%-6s %-14s %9s %9s %9s\n' size command median "x wc -l" "peak RSS"
for size in $SIZES; do
	f="$PERF_DIR/rec-$size.jsonl"
	if [[ ! -s "$f" ]]; then
		go run ./testdata/perf/gen.go -mb "$size" -o "$f" 2>/dev/null
	fi
	cat "$f" >/dev/null
	rm -f "$PERF_DIR"/*.times
	for ((i = 1; i <= RUNS; i++)); do
		run wc wc -l "$f"
		run inspect "$SUMMIT" inspect "$f"
		run print "$SUMMIT" replay --print "$f"
		if ((HAVE_JQ && i <= JQ_RUNS)); then
			run jq jq -c . "$f"
		fi
	done
	wc_med=$(median "$PERF_DIR/wc.times")
	for name in wc inspect print jq; do
		[[ -f "$PERF_DIR/$name.times" ]] || continue
		m=$(median "$PERF_DIR/$name.times")
		printf '%-6s %-14s %8ss %8.1fx %6s MB\n' "${size}MB" "$name" "$m" "$(awk -v a="$m" -v b="$wc_med" 'BEGIN {print a / b}')" "$(maxrss "$PERF_DIR/$name.times")"
	done
	if [[ -f "$PERF_DIR/jq.times" ]]; then
		awk -v j="$(median "$PERF_DIR/jq.times")" -v p="$(median "$PERF_DIR/print.times")" \
			'BEGIN {printf "%-6s replay --print is %.1fx faster than jq -c .\n", "", j / p}'
	fi
	printf '%-6s decode rate of print: %.0f MB/s, of inspect: %.0f MB/s (file size / median)\n' "" \
		"$(awk -v s="$(stat -c %s "$f")" -v t="$(median "$PERF_DIR/print.times")" 'BEGIN {print s / t / 1e6}')" \
		"$(awk -v s="$(stat -c %s "$f")" -v t="$(median "$PERF_DIR/inspect.times")" 'BEGIN {print s / t / 1e6}')"
done
rm -f "$PERF_DIR"/rss.$$ "$PERF_DIR"/stderr.$$
