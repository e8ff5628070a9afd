#!/usr/bin/env bash
# live.sh: the live workbench under load, measured on the real process in a real terminal.
#
# Starts the workbench (summit with script tapes) in tmux at 200×60, delegates to N subagents
# (default 200) that each stream words at RATE words/s (default 250: 50 k tokens/s combined)
# for about SECS seconds, and samples /proc/<pid>/stat while they stream. Reports, as medians:
#   busy_cpu   the whole process's CPU (% of one core) while all N stream, per-second samples
#   ui_cpu     the UI's share of it (View and Bubble Tea's screen update, from a CPU profile)
#   lateness   how much later than the tape's own timing each stream ended (first to last
#              token, against (words-1)/rate), median over the subagents
#   idle_cpu   the process's CPU once every stream has ended, nothing typed (% of one core)
#   idle_wake  wake-ups a second (context switches of all its threads) while idle
#   key_ms     CPU per keystroke: KEYS letters (default 100) typed one at a time into the
#              input, while idle, less the idle's CPU over the same time (both read in ns)
#   rss_mb     the process's peak resident set (VmHWM) at the end, in MB
#   start_s    seconds from the first /delegate line to all N running
#
# Usage: testdata/perf/live.sh [BIN...]   (default: builds ./cmd/summit)
#   Each BIN is measured RUNS times (default 3), interleaved, so a noisy machine hits all alike.
#   N=200 RATE=250 SECS=14 RUNS=3 IDLE=30 (seconds of idle measured; CPU is counted in ticks
#   of 10 ms, so a short window reads 0.1 % steps) BUSY=SECS/2 (seconds of busy_cpu samples,
#   from when all N run) DELAY=0 (seconds each subagent waits before it streams, so that
#   starting many is not slowed by the ones already streaming; the busy samples start once the
#   last one's wait is over, and ui_cpu's wall time once the first one's is) KEEP=1 (keep the
#   temp dir) are read from the environment.
# While they stream, sa-1's transcript is shown (the tree, down, enter).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-200} RATE=${RATE:-250} SECS=${SECS:-14} RUNS=${RUNS:-3} IDLE=${IDLE:-30}
BUSY=${BUSY:-$((SECS / 2))} DELAY=${DELAY:-0} KEYS=${KEYS:-100}
tmp=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'tmux -S "$tmp/tmux.sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
	go build -o "$tmp/summit" ./cmd/summit
	bins=("$tmp/summit")
fi
hz=$(getconf CLK_TCK)

# The fixture: an agent with no tools, and a tape that streams SECS seconds of words, a line
# break every 12 words, then a capsule.
ws=$tmp/ws tapes=$tmp/tapes
mkdir -p "$ws/.summit/agents" "$tapes" "$tmp/cfg" "$tmp/data"
printf -- '---\nname: streamer\ndescription: streams words\ntools: [read_file]\nmax_turns: 10\n---\nStream.\n' >"$ws/.summit/agents/streamer.md"
words=$((RATE * SECS))
{
	printf 'tapes:\n  - name: streamer\n    match: {agent: streamer}\n    rate: %s\n    steps:\n' "$RATE"
	# DELAY: each subagent first waits, so the N start while nothing streams yet.
	if ((DELAY > 0)); then printf '      - sleep: %ss\n' "$DELAY"; fi
	printf '      - say: "'
	for ((i = 1; i <= words; i++)); do
		if ((i % 12 == 0)); then printf 'w%d\\n' "$i"; else printf 'w%d ' "$i"; fi
	done
	printf 'end"\n      - capsule: {summary: "streamed"}\n'
} >"$tapes/streamer.yaml"
words=$((words + 1))

cpu() { # utime+stime of pid, in ticks
	awk '{print $14+$15}' "/proc/$1/stat"
}
cpuns() { # CPU time of all threads of pid, in ns (the scheduler's count: no 10 ms ticks)
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'
}
switches() { # voluntary+involuntary context switches of all threads of pid
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s}'
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
T() { tmux -S "$tmp/tmux.sock" "$@"; }
waitfor() { # regexp, seconds
	local end=$((SECONDS + $2))
	while ((SECONDS < end)); do
		if T capture-pane -p -t perf | grep -qE "$1"; then return 0; fi
		sleep 0.1
	done
	echo "live.sh: the screen never showed '$1'" >&2
	T capture-pane -p -t perf >&2
	return 1
}

# one BIN LABEL: one run; appends "label metric value" lines to $tmp/results.
one() {
	local bin=$1 label=$2 rec=$tmp/rec.jsonl prof=$tmp/cpu.prof
	rm -f "$rec" "$prof"
	T kill-server 2>/dev/null || true
	T new-session -d -s perf -x 200 -y 60 "cd $ws && XDG_CONFIG_HOME=$tmp/cfg XDG_DATA_HOME=$tmp/data SUMMIT_CPUPROFILE=$prof exec $bin --tapes $tapes --record $rec --max-parallel $N 2>$tmp/stderr"
	waitfor 'type /help' 20
	local pid
	pid=$(T display-message -p -t perf '#{pane_pid}')
	local t0 t1 wall
	t0=$(date +%s%N)
	# The N lines go in as one tmux command file: each pasted (bracketed, one message for
	# the line) and entered, with no tmux client started per line (at N=1000 on a loaded
	# machine, three clients a line took minutes; the workbench reads them in as fast as a
	# paste).
	for ((i = 1; i <= N; i++)); do
		printf "set-buffer '/delegate \"stream %d\" --agent-type streamer'\npaste-buffer -p -t perf\nsend-keys -t perf Enter\n" "$i"
	done >"$tmp/delegate.tmux"
	T source-file "$tmp/delegate.tmux"
	waitfor "$N running" $((60 + N / 10))
	local tn
	tn=$(date +%s%N)
	echo "$label start_s $(awk -v a="$t0" -v b="$tn" 'BEGIN {printf "%.1f", (b - a) / 1e9}')" >>"$tmp/results"
	# Watch sa-1 stream, as a person would: the tree, down to sa-1, enter.
	T send-keys -t perf Escape
	waitfor '┏━ tree' 10
	T send-keys -t perf Down Enter
	if ((DELAY > 0)); then
		# The last one started at tn: all stream once its DELAY has passed. The streaming's wall
		# time (for ui_cpu) starts when the first one's did.
		sleep "$(awk -v tn="$tn" -v d="$DELAY" -v now="$(date +%s%N)" 'BEGIN {s = (tn - now) / 1e9 + d + 1; print (s > 0 ? s : 0)}')"
		t0=$((t0 + DELAY * 1000000000))
	fi
	# Busy: per-second CPU while all N stream.
	local c0 c1 s
	for ((s = 0; s < BUSY; s++)); do
		c0=$(cpu "$pid")
		sleep 1
		c1=$(cpu "$pid")
		echo "$label busy_cpu $(((c1 - c0) * 100 / hz))" >>"$tmp/results"
	done
	waitfor ' 0 running' $((SECS * 4 + 60))
	t1=$(date +%s%N)
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) / 1e9}')
	sleep 2
	# Idle: nothing runs, nothing is typed.
	local w0 w1 i0 i1 it0 it1
	i0=$(cpuns "$pid") it0=$(date +%s%N)
	w0=$(switches "$pid")
	sleep "$IDLE"
	i1=$(cpuns "$pid") it1=$(date +%s%N)
	w1=$(switches "$pid")
	echo "$label idle_cpu $(awk -v d=$((i1 - i0)) -v s=$((it1 - it0)) 'BEGIN {printf "%.2f", d * 100 / s}')" >>"$tmp/results"
	echo "$label idle_wake $(((w1 - w0) / IDLE))" >>"$tmp/results"
	# Keystrokes: 100 letters, one at a time, into the input; the CPU they cost, less idle's.
	T send-keys -t perf Escape Escape
	T send-keys -t perf -l "x"
	T send-keys -t perf BSpace
	sleep 0.5
	# The CPU is read in ns (cpuns), the idle's rate over the same wall time taken off.
	c0=$(cpuns "$pid")
	t0=$(date +%s%N)
	for ((i = 0; i < KEYS; i++)); do T send-keys -t perf -l "a"; done
	sleep 0.3
	c1=$(cpuns "$pid")
	t1=$(date +%s%N)
	echo "$label key_ms $(awk -v d=$((c1 - c0)) -v el=$((t1 - t0)) -v idle=$((i1 - i0)) -v idlewall=$((it1 - it0)) -v k="$KEYS" \
		'BEGIN {printf "%.2f", (d - el * idle / idlewall) / 1e6 / k}')" >>"$tmp/results"
	# Peak memory: the kernel's high-water mark of the process's resident set, in MB.
	echo "$label rss_mb $(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")" >>"$tmp/results"
	T send-keys -t perf C-u
	T send-keys -t perf -l "/quit"
	T send-keys -t perf Enter
	for ((i = 0; i < 100 && $(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0) == 1; i++)); do sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && { T send-keys -t perf C-c; sleep 1; T kill-server; }
	# Lateness: each stream's first to last token against the tape's (words-1)/rate.
	awk -v words="$words" -v rate="$RATE" '
		/"event_type":"token"/ {
			match($0, /"ts":"[^"]*"/); ts = substr($0, RSTART + 6, RLENGTH - 7)
			match($0, /"subagent_id":"[^"]*"/); id = substr($0, RSTART + 15, RLENGTH - 16)
			split(ts, d, "T"); split(d[2], t, ":"); sub(/Z$/, "", t[3]); s = t[1] * 3600 + t[2] * 60 + t[3]
			if (!(id in first)) first[id] = s; last[id] = s
		}
		END { want = (words - 1) / rate; for (id in first) printf "%.1f\n", ((last[id] - first[id]) / want - 1) * 100 }' "$rec" |
		median | sed "s/^/$label lateness /" >>"$tmp/results"
	# The UI's CPU while streaming, from the profile: View and Bubble Tea's screen update (the
	# renderer's flush), in seconds, over the streaming's wall time.
	if [ -s "$prof" ]; then
		local view flush
		view=$(cumsecs '\(\*Model\)\.View$' "$bin" "$prof")
		flush=$(cumsecs 'cursedRenderer\)\.flush$' "$bin" "$prof")
		echo "$label view_cpu $(awk -v v="$view" -v w="$wall" 'BEGIN {printf "%.1f", v * 100 / w}')" >>"$tmp/results"
		echo "$label flush_cpu $(awk -v v="$flush" -v w="$wall" 'BEGIN {printf "%.1f", v * 100 / w}')" >>"$tmp/results"
		echo "$label ui_cpu $(awk -v v="$view" -v f="$flush" -v w="$wall" 'BEGIN {printf "%.1f", (v + f) * 100 / w}')" >>"$tmp/results"
	fi
}

# cumsecs FUNC-REGEXP BIN PROFILE: the cumulative seconds of the function in the profile.
cumsecs() {
	go tool pprof -top -cum -show="$1" "$2" "$3" 2>/dev/null | awk -v re="$1" '
		$6 ~ re { v = $4; if (v ~ /ms$/) { sub(/ms$/, "", v); v /= 1000 } else if (v ~ /us$|µs$/) { sub(/(us|µs)$/, "", v); v /= 1e6 } else if (v ~ /min$/) { sub(/min$/, "", v); v *= 60 } else sub(/s$/, "", v); print v + 0; found = 1; exit }
		END { if (!found) print 0 }'
}

for ((r = 1; r <= RUNS; r++)); do
	for ((b = 0; b < ${#bins[@]}; b++)); do
		echo "run $r: ${bins[$b]}" >&2
		one "${bins[$b]}" "bin$b"
	done
done

echo "N=$N subagents × $RATE words/s for ${SECS}s at 200×60; medians of $RUNS runs"
echo "(ui_cpu, view_cpu, flush_cpu: % of one core while streaming, from a CPU profile)"
printf '%-40s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n' binary busy_cpu ui_cpu view_cpu flush_cpu lateness idle_cpu idle_wake key_ms rss_mb start_s
for ((b = 0; b < ${#bins[@]}; b++)); do
	row=()
	for m in busy_cpu ui_cpu view_cpu flush_cpu lateness idle_cpu idle_wake key_ms rss_mb start_s; do
		row+=("$(awk -v l="bin$b" -v m=$m '$1 == l && $2 == m {print $3}' "$tmp/results" | median)")
	done
	printf '%-40s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n' "$(basename "${bins[$b]}")" "${row[@]}"
done
