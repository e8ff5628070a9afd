#!/usr/bin/env bash
# livemem.sh: the memory of a live session that streams a lot, on the real process.
#
# A headless session (summit run: the same orchestrator, recorder and fold as the workbench)
# on script tapes delegates to N subagents (default 200) that each stream a WORDS-word answer
# (default 900,000 words, about 7 MB), PAR at a time (default 8), on the simulated clock. It
# reports the recording's size, the text streamed, the wall time, and the peak RSS the kernel
# saw (/usr/bin/time -v). Defaults stream about 1.2 GB of text into a 1.4 GB recording.
#
# Usage: testdata/perf/livemem.sh [BIN]   (default: builds ./cmd/summit)
#   N=200 WORDS=900000 PAR=8 KEEP=1 (keep the temp dir) are read from the environment.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-200} WORDS=${WORDS:-900000} PAR=${PAR:-8}
tmp=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$tmp/summit" ./cmd/summit
	bin=$tmp/summit
fi
command -v /usr/bin/time >/dev/null || { echo "livemem.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

ws=$tmp/ws tapes=$tmp/tapes
mkdir -p "$ws/.summit/agents" "$tapes"
printf -- '---\nname: streamer\ndescription: streams words\ntools: [read_file]\nmax_turns: 10\n---\nStream.\n' >"$ws/.summit/agents/streamer.md"
# A word a delta at a million words a second of simulated time: the runtime coalesces them.
awk -v n="$WORDS" 'BEGIN {
	printf "tapes:\n  - name: streamer\n    match: {agent: streamer}\n    rate: 1000000\n    steps:\n      - say: \""
	for (i = 1; i <= n; i++) printf (i % 12 == 0 ? "w%d\\n" : "w%d "), i
	printf "end\"\n      - capsule: {summary: \"streamed\"}\n"
}' >"$tapes/streamer.yaml"
{
	for ((i = 1; i <= N; i++)); do echo "/delegate \"stream $i\" --agent-type streamer"; done
	printf '/wait'
	for ((i = 1; i <= N; i++)); do printf ' sa-%d' "$i"; done
	echo
} >"$tmp/script.summit"

cd "$ws"
XDG_CONFIG_HOME=$tmp/cfg XDG_DATA_HOME=$tmp/data XDG_CACHE_HOME=$tmp/cache \
	/usr/bin/time -v "$bin" run --script "$tmp/script.summit" --tapes "$tapes" --record "$tmp/rec.jsonl" \
	--max-parallel "$PAR" >/dev/null 2>"$tmp/stderr" || { tail -5 "$tmp/stderr" >&2; exit 1; }
rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$tmp/stderr")
wall=$(awk '/Elapsed \(wall clock\)/ {print $NF}' "$tmp/stderr")
bytes=$(stat -c %s "$tmp/rec.jsonl")
text=$(( $(stat -c %s "$tapes/streamer.yaml") * N ))
printf 'N=%d subagents x %d words (%d at once)\n' "$N" "$WORDS" "$PAR"
printf 'recording   %8.1f MB\n' "$(echo "$bytes / 1000000" | bc -l)"
printf 'streamed    %8.1f MB of tape text (about)\n' "$(echo "$text / 1000000" | bc -l)"
printf 'wall        %10s\n' "$wall"
printf 'peak RSS    %8.1f MB\n' "$(echo "$rss / 1000" | bc -l)"
