#!/usr/bin/env bash
# seek.sh: replay seeking, catch-up and peak RSS on generated recordings, and a live session's
# RSS after streaming 1 GB. Runs testdata/perf/seekbench COUNT times (default 5) per size and
# prints each run and the medians, and the 1 GB / 128 MB ratio of peak RSS.
#
#   testdata/perf/seek.sh [COUNT] [SIZES_MB...]     (default: 5 128 1024)
#
# Recordings are generated once into $PERF_DIR (default /tmp/summit-perf) and kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-5}
shift || true
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(128 1024); fi
dir=${PERF_DIR:-/tmp/summit-perf}
mkdir -p "$dir"
bin="$dir/seekbench"
go build -o "$bin" ./testdata/perf/seekbench

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { grep -o "\b$1=[^ ]*" | head -1 | cut -d= -f2; }

declare -A rss
for mb in "${sizes[@]}"; do
	rec="$dir/r$mb.jsonl"
	[ -s "$rec" ] || "$bin" gen -size "$mb" -o "$rec"
	out="$dir/replay-$mb.txt"
	: >"$out"
	for i in $(seq "$count"); do
		"$bin" replay -f "$rec" | tee -a "$out"
	done
	echo "== $mb MB: medians of $count runs"
	for k in first_frame_ms catchup_ms seek_digit_max_ms seek_end_ms seek_seq_max_ms stepback_max_ms heap_mb peak_rss_mb; do
		printf '%s=%s ' "$k" "$(while read -r l; do echo "$l" | field "$k"; done <"$out" | median)"
	done
	echo
	rss[$mb]=$(while read -r l; do echo "$l" | field peak_rss_mb; done <"$out" | median)
done
if [ -n "${rss[128]:-}" ] && [ -n "${rss[1024]:-}" ]; then
	awk -v a="${rss[128]}" -v b="${rss[1024]}" 'BEGIN {printf "peak RSS 1024/128 MB: %.2f (linear data growth is 8x)\n", b/a}'
fi
echo "== live: 1024 MB streamed"
for i in $(seq "$count"); do "$bin" live -size 1024 -dir "$dir"; done | tee "$dir/live.txt"
printf 'live peak_rss_mb median=%s\n' "$(while read -r l; do echo "$l" | field peak_rss_mb; done <"$dir/live.txt" | median)"
