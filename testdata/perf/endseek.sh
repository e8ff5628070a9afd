#!/usr/bin/env bash
# endseek.sh: `$` (seek to the end) right after opening a generated recording, with the replay
# of OLD_REV (before replay sidecars) and of this tree, run alternately COUNT times in the same
# run, with the medians. This tree's replay is primed first (one replay folded to the end,
# which writes the sidecar a reopened recording seeks from). Nothing is kept: the recording,
# the binaries and the cache dir live in a temporary directory.
#
#   testdata/perf/endseek.sh [COUNT] [SIZE_MB] [OLD_REV]     (default: 5 1024 06ce052)
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-5}
mb=${2:-1024}
old=${3:-06ce052}
dir=$(mktemp -d "${TMPDIR:-/tmp}/summit-endseek-XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/old"
git archive "$old" | tar -x -C "$dir/old"
# The same measuring program for both: it uses only what the old replay has too.
cp testdata/perf/seekbench/main.go "$dir/old/testdata/perf/seekbench/main.go"
go build -o "$dir/new" ./testdata/perf/seekbench
(cd "$dir/old" && go build -o "$dir/oldbin" ./testdata/perf/seekbench)
"$dir/new" gen -size "$mb" -o "$dir/r.jsonl"
export XDG_CACHE_HOME="$dir/cache"
echo "prime: $("$dir/new" replay -f "$dir/r.jsonl")"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for i in $(seq "$count"); do
	echo "old $("$dir/oldbin" end -f "$dir/r.jsonl")"
	echo "new $("$dir/new" end -f "$dir/r.jsonl")"
done | tee "$dir/out.txt"
for v in old new; do
	for k in first_frame_ms end_after_open_ms; do
		printf '%s %s median=%s\n' "$v" "$k" "$(grep "^$v " "$dir/out.txt" | grep -o "\b$k=[^ ]*" | cut -d= -f2 | median)"
	done
done
echo "sidecar: $(du -k "$dir"/cache/summit/replay/*.ckpt | cut -f1) KB"
