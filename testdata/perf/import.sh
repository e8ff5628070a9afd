#!/usr/bin/env bash
# import.sh: `summit import` against `jq -c .` on the same real-shaped input, side by side,
# COUNT times each, with the medians of wall time, MB/s and peak RSS, and the ratio of the
# throughputs. Each round also runs the import with GOMAXPROCS=1 ("import1"): its MB/s is the
# single-core figure, and MB_per_cpu_s (MB over user+system CPU seconds) is what one core does
# unshared, whatever the load. The input (SIZE_MB) repeats the lines of the project's own fixtures (a
# Claude Code session, a Codex rollout, a Gemini CLI chat) with varied ids (uuids, message,
# request and tool-call ids), so every repetition is new work for the importer, not a repeat
# it can drop. Nothing is kept: the input, the binary and the recordings live in a temporary
# directory. Needs jq, python3 and GNU time.
#
#   testdata/perf/import.sh [COUNT] [SIZE_MB] [FORMAT]     (default: 3 300 claude; or codex, gemini)
#   SUMMIT=path/to/summit testdata/perf/import.sh ...      (use that binary instead of building one)
#   MEMORY_ONLY=1 testdata/perf/import.sh 1 1024 FORMAT    (imports only, no jq and no GOMAXPROCS=1
#                                                           run: the peak RSS at sizes where the
#                                                           side-by-side rounds take too long)
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-3}
mb=${2:-300}
format=${3:-claude}
command -v jq >/dev/null || { echo "import.sh: needs jq (apt-get install jq)" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/summit-import-XXXXXX")
trap 'rm -rf "$dir"' EXIT
if [ -n "${SUMMIT:-}" ]; then
	cp "$SUMMIT" "$dir/summit" # a binary built from this tree already (SUMMIT=path)
else
	go build -o "$dir/summit" ./cmd/summit
fi
case $format in
claude) src=session/imports/testdata/claude/v2.1/-home-dev-shop/7f3c1a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl ;;
codex) src=session/imports/testdata/codex/sessions/2026/01/15/rollout-2026-01-15T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl ;;
gemini) src=session/imports/testdata/gemini/tmp/5d1c3e/chats/session-2026-05-01T12-00-9b8c7d6e.jsonl ;;
*) echo "import.sh: FORMAT is claude, codex or gemini" >&2; exit 2 ;;
esac
python3 - "$src" "$dir/in.jsonl" "$mb" "$format" <<'PY'
import re, sys
src, out, mb, fmt = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = [l for l in open(src) if l.strip()]
if fmt in ("codex", "gemini"):
    head, body = lines[:1], lines[1:]
else:
    head, body = [], [l for l in lines if '"type":"summary"' not in l and '"custom-title"' not in l]
# An id prefix only at the start of a word: "call_" inside a type name (custom_tool_call_output)
# is not an id, and tagging it would make a new unknown type of every repetition.
ids = re.compile(r'(?<![0-9A-Za-z_])(toolu_|msg_|call_|req_|"uuid":"|"parentUuid":"|"messageId":"|"leafUuid":")([0-9A-Za-z-]+)')
if fmt == "gemini":
    # Message ids (a record with a known id replaces that message) and rewinds.
    ids = re.compile(r'("id":"|"\$rewindTo":")([0-9A-Za-z_-]+)')
want = mb << 20
with open(out, "w") as f:
    n = sum(f.write(l) for l in head)
    i = 0
    while n < want:
        tag = "r%07d" % i
        for l in body:
            n += f.write(ids.sub(lambda m: m.group(1) + tag + m.group(2), l))
        i += 1
PY
size=$(stat -c %s "$dir/in.jsonl")
echo "input: $size bytes ($format, $(wc -l <"$dir/in.jsonl") lines)"
run() { # name, command...: prints "name seconds peak_kb cpu_seconds"
	local name=$1
	shift
	/usr/bin/time -f "$name %e %M %U %S" -o "$dir/t" "$@" >/dev/null
	cat "$dir/t"
}
if [ -n "${MEMORY_ONLY:-}" ]; then
	for i in $(seq "$count"); do
		rm -rf "$dir/out"
		run import "$dir/summit" import --format "$format" "$dir/in.jsonl" -o "$dir/out"
	done | tee "$dir/runs.txt"
	s=$(cut -d' ' -f2 "$dir/runs.txt" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	kb=$(cut -d' ' -f3 "$dir/runs.txt" | sort -n | tail -1)
	echo "import median_s=$s MB/s=$(awk -v b="$size" -v s="$s" 'BEGIN{printf "%.1f", b/1048576/s}') max_peak_rss_MB=$((kb / 1024)) recording_bytes=$(stat -c %s "$dir"/out/*.jsonl)"
	exit 0
fi
for i in $(seq "$count"); do
	run jq jq -c . "$dir/in.jsonl"
	rm -rf "$dir/out"
	run import "$dir/summit" import --format "$format" "$dir/in.jsonl" -o "$dir/out"
	rm -rf "$dir/out"
	GOMAXPROCS=1 run import1 "$dir/summit" import --format "$format" "$dir/in.jsonl" -o "$dir/out"
done | tee "$dir/runs.txt"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for v in jq import import1; do
	s=$(grep "^$v " "$dir/runs.txt" | cut -d' ' -f2 | median)
	kb=$(grep "^$v " "$dir/runs.txt" | cut -d' ' -f3 | median)
	cpu=$(grep "^$v " "$dir/runs.txt" | awk '{print $4 + $5}' | median)
	# MB per CPU second: what one core does when it is not shared (the machine may be loaded).
	echo "$v median_s=$s MB/s=$(awk -v b="$size" -v s="$s" 'BEGIN{printf "%.1f", b/1048576/s}') peak_rss_MB=$((kb / 1024)) cpu_s=$cpu MB_per_cpu_s=$(awk -v b="$size" -v s="$cpu" 'BEGIN{printf "%.1f", b/1048576/s}')"
	echo "$v $s" >>"$dir/med.txt"
done
awk '$1=="jq"{j=$2} $1=="import"{i=$2} $1=="import1"{o=$2} END{printf "import/jq throughput ratio: %.2fx (GOMAXPROCS=1: %.2fx)\n", j/i, j/o}' "$dir/med.txt"
