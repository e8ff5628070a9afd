#!/usr/bin/env bash
# scale-remote.sh: one session holding 1,000 subagents, local and remote together (issue 29
# item 10), against the same 1,000 all local, measured in the same run.
#
# A headless session (summit run: the same orchestrator, recorder and fold as the workbench) on
# script tapes delegates N subagents (default 1,000) with --max-parallel N, so all are held at
# once. Three setups, alternating in each round so a noisy machine hits all alike, medians of
# RUNS:
#
#   local    all N local, no NATS (the simulated clock: cmd/summit TestRunThousandSubagents's
#            setup)
#   natslocal all N local, the session connected to NATS (--nats: the wall clock, as with
#            runners)
#   mixed    N-REMOTE local and REMOTE (default 300) with `--on any` on RUNNERS (default 2)
#            `summit runner` processes of SLOTS slots each (default REMOTE/RUNNERS: every job
#            runs at once)
#
# A real nats-server (Debian's, -js, loopback) is started once; the runners start for each
# mixed run. Every subagent's tape says one line, sleeps SLEEP (default 5s: on the wall clock
# the subagents overlap, so the session holds them together) and ends with a capsule.
#
# Metrics: wall_s (the run), rss_mb (the session's peak RSS, /usr/bin/time -v), runner_rss_mb
# (each runner's peak, VmHWM, largest of the runners), cpu_s (the session's user+system CPU,
# with the git processes it waited for), nats_cpu_s (nats-server's CPU during the run),
# runner_cpu_s (the runners' own CPU, both together; not their git children),
# and for the mixed run the recording's lines and bytes per local and per remote subagent
# (rec_lines_local, rec_lines_remote, rec_bytes_local, rec_bytes_remote). Every run is checked:
# every subagent spawned and ended as success, seqs 1, 2, 3… with no gap (the script fails
# otherwise).
#
# Usage: testdata/perf/scale-remote.sh [BIN]   (default: builds ./cmd/summit)
#   N=1000 REMOTE=300 RUNNERS=2 SLOTS= SLEEP=5s RUNS=3 KEEP=1 (keep the temp dir) PROF=1 (a CPU
#   profile of each run's session and runners, prof-* in the temp dir; with KEEP)
#   SETUPS="local natslocal mixed" (which to run) OLD=BIN (adds mixedold: the mixed setup with
#   another binary, e.g. the one before a change)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-1000} REMOTE=${REMOTE:-300} RUNNERS=${RUNNERS:-2} SLEEP=${SLEEP:-5s} RUNS=${RUNS:-3}
SLOTS=${SLOTS:-$(((REMOTE + RUNNERS - 1) / RUNNERS))}
command -v nats-server >/dev/null || { echo "scale-remote.sh: needs nats-server (apt-get install nats-server)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "scale-remote.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
command -v jq >/dev/null || { echo "scale-remote.sh: needs jq" >&2; exit 2; }
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$tmp/summit" ./cmd/summit
	bin=$tmp/summit
fi
bin=$(realpath "$bin")

# The user's dirs: the session key lives in the config; the runners trust it.
export XDG_CONFIG_HOME=$tmp/cfg XDG_DATA_HOME=$tmp/data XDG_CACHE_HOME=$tmp/cache HOME=$tmp/home
mkdir -p "$HOME"
key=$("$bin" runner key)

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=nats://127.0.0.1:$port
nats-server -a 127.0.0.1 -p "$port" -js -sd "$tmp/js" >"$tmp/nats.log" 2>&1 &
pids+=($!)
nats=$!
tck=$(getconf CLK_TCK)
# cputicks PID: the process's user+system CPU so far, in clock ticks.
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
for _ in $(seq 100); do grep -q "Server is ready" "$tmp/nats.log" && break; sleep 0.1; done
grep -q "Server is ready" "$tmp/nats.log" || { cat "$tmp/nats.log" >&2; exit 1; }

tapes=$tmp/tapes
mkdir -p "$tapes"
cat >"$tapes/quick.yaml" <<EOF
tapes:
  - name: quick
    match: {agent: analyzer}
    rate: 1000
    steps:
      - say: "looked at it: nothing to change here"
      - sleep: $SLEEP
      - say: "still nothing to change"
      - capsule: {summary: "nothing to change", confidence: 0.9}
EOF

# script REMOTE: the N /delegate lines, the last REMOTE of them --on any, then one /wait.
script() {
	local remote=$1 f=$tmp/s-$1.summit
	{
		for ((i = 1; i <= N; i++)); do
			if ((i > N - remote)); then
				echo "/delegate \"look at part $i\" --agent-type analyzer --on any"
			else
				echo "/delegate \"look at part $i\" --agent-type analyzer"
			fi
		done
		printf '/wait'
		for ((i = 1; i <= N; i++)); do printf ' sa-%d' "$i"; done
		echo
	} >"$f"
	echo "$f"
}
s_local=$(script 0)
s_mixed=$(script "$REMOTE")

# check REC: every subagent spawned once and stopped once as success, seqs with no gap. Prints
# the subagents placed on a runner.
check() {
	jq -r -s --argjson n "$N" '
		(if ([.[].seq] == [range(1; length + 1)]) then empty else "seqs have a gap or a duplicate" end),
		([.[] | select(.type == "SubagentSpawned")] | length) as $sp |
		([.[] | select(.type == "SubagentStop" and .data.outcome == "success")] | length) as $ok |
		(if $sp == $n and $ok == $n then empty else "spawned \($sp), ended as success \($ok), want \($n) each" end)
	' "$1" | { if read -r l; then echo "scale-remote.sh: $1: $l" >&2; exit 1; fi; }
}

# recsize REC: lines and bytes per local and per remote subagent (the lines naming it).
recsize() {
	jq -c 'select(.subagent_id != null and .subagent_id != "") | [.subagent_id, .type, (.data.runner // "")]' "$1" >"$tmp/ids"
	# Byte counts from the file itself: jq re-encodes.
	jq -r 'select(.type == "SubagentSpawned" and (.data.runner // "") != "") | .subagent_id' "$1" | sort -u >"$tmp/remote-ids"
	awk -v remote="$tmp/remote-ids" '
		BEGIN { while ((getline id < remote) > 0) r[id] = 1 }
		match($0, /"subagent_id":"sa-[0-9]+"/) {
			id = substr($0, RSTART + 15, RLENGTH - 16); k = (id in r) ? "remote" : "local"
			lines[k]++; bytes[k] += length($0) + 1; subs[k, id] = 1
		}
		END {
			for (key in subs) { split(key, p, SUBSEP); n[p[1]]++ }
			for (k in lines) printf "rec_lines_%s %.1f\nrec_bytes_%s %.0f\n", k, lines[k] / n[k], k, bytes[k] / n[k]
		}' "$1"
}

# run SETUP: one run; appends "SETUP metric value" lines to results.
run() {
	local setup=$1 script=$s_local args=() rp=() b=$bin
	[ "$setup" != mixedold ] || b=$OLD
	local ws=$tmp/ws-$setup rec=$tmp/rec-$setup.jsonl
	rm -rf "$ws" "$rec" "$tmp/js-runner"-*
	mkdir -p "$ws"
	printf 'package main\n\nfunc main() {}\n' >"$ws/main.go"
	case $setup in
	natslocal) args=(--nats "$url" --insecure) ;;
	mixed | mixedold)
		args=(--nats "$url" --insecure)
		script=$s_mixed
		for ((k = 1; k <= RUNNERS; k++)); do
			SUMMIT_CPUPROFILE=${PROF:+$tmp/prof-runner-$k} "$b" runner --nats "$url" --insecure --name "scale-$k" --slots "$SLOTS" --trust "$key" --tapes "$tapes" 2>"$tmp/runner-$k.log" &
			rp+=($!)
			pids+=($!)
		done
		for ((k = 1; k <= RUNNERS; k++)); do
			for _ in $(seq 300); do grep -q "runner scale-$k ready" "$tmp/runner-$k.log" && break; sleep 0.2; done
			grep -q "runner scale-$k ready" "$tmp/runner-$k.log" || { cat "$tmp/runner-$k.log" >&2; exit 1; }
		done
		;;
	esac
	local n0
	n0=$(cputicks "$nats")
	(cd "$ws" && SUMMIT_CPUPROFILE=${PROF:+$tmp/prof-$setup} /usr/bin/time -v "$b" run --script "$script" --tapes "$tapes" --record "$rec" \
		--max-parallel "$N" "${args[@]}" >/dev/null 2>"$tmp/stderr-$setup") ||
		{ tail -20 "$tmp/stderr-$setup" >&2; exit 1; }
	local rmax=0 rcpu=0
	printf '%s nats_cpu_s %.1f\n' "$setup" "$(echo "($(cputicks "$nats") - $n0) / $tck" | bc -l)" >>"$tmp/results"
	for p in "${rp[@]}"; do
		local hwm
		hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
		((hwm > rmax)) && rmax=$hwm
		rcpu=$((rcpu + $(cputicks "$p")))
		kill "$p"
		wait "$p" 2>/dev/null || true
	done
	check "$rec"
	awk -v s="$setup" -F': ' '
		/Maximum resident set size/ {printf "%s rss_mb %.1f\n", s, $2 / 1000}
		/User time/ {cpu += $2} /System time/ {cpu += $2}
		/Elapsed \(wall clock\)/ {n = split($2, t, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + t[i]; printf "%s wall_s %.1f\n", s, w}
		END {printf "%s cpu_s %.1f\n", s, cpu}' "$tmp/stderr-$setup" >>"$tmp/results"
	if [ "$setup" != local ] && [ "$setup" != natslocal ]; then
		printf '%s runner_rss_mb %.1f\n%s runner_cpu_s %.1f\n' "$setup" "$(echo "$rmax / 1000" | bc -l)" "$setup" "$(echo "$rcpu / $tck" | bc -l)" >>"$tmp/results"
		recsize "$rec" | sed "s/^/$setup /" >>"$tmp/results"
	fi
}

touch "$tmp/results"
for ((r = 1; r <= RUNS; r++)); do
	for setup in ${SETUPS:-local natslocal mixed ${OLD:+mixedold}}; do
		echo "scale-remote.sh: run $r, $setup" >&2
		run "$setup"
	done
done

echo "$N subagents in one summit run: all local, all local with --nats, and $((N - REMOTE)) local + $REMOTE on $RUNNERS runners ($SLOTS slots each); each tape sleeps $SLEEP; medians of $RUNS (load $(cut -d' ' -f1-3 /proc/loadavg))"
setups=(local natslocal mixed ${OLD:+mixedold})
printf '%-18s' metric; printf ' %10s' "${setups[@]}" mixed/local; echo
for m in wall_s cpu_s rss_mb nats_cpu_s runner_rss_mb runner_cpu_s rec_lines_local rec_lines_remote rec_bytes_local rec_bytes_remote; do
	row=()
	for s in "${setups[@]}"; do
		v=$(awk -v s="$s" -v m="$m" '$1 == s && $2 == m {print $3}' "$tmp/results" | median)
		row+=("$v")
	done
	printf '%-18s' "$m"; printf ' %10s' "${row[@]}"; printf ' %10s\n' "$(awk -v a="${row[0]}" -v b="${row[2]}" 'BEGIN {if (a == "nan" || a + 0 == 0) print "-"; else printf "%.2f", b / a}')"
done
