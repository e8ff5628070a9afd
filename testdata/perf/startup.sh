#!/usr/bin/env bash
# startup.sh: how fast summit starts, on the real binary.
#
#   version      `summit version`, its output to /dev/null: the process's whole life (wall ms)
#   cpu          the same runs' CPU time (user+system ms of the child): less sensitive to a
#                shared machine's load than the wall clock
#   ×hello       version's median over a Go hello-world's, timed in the same loop (issue 28
#                asks for at most 1.5×). The loop also times glamour-floor, a hello-world that
#                only imports charm.land/glamour/v2 as the ui package does: the start that no
#                change inside summit can go below while it renders Markdown through glamour
#                (its package initialisers, chroma's lexers and styles above all, run in every
#                process that links it)
#   version_tty  the same in a terminal (a tmux pane at 200×60; inside tmux, as people run it)
#   first_frame  `summit` (the workbench, an empty workspace, --no-record) in a tmux pane at
#                200×60: from the exec to the first capture of the pane that shows the header
#                The binary's own marks (SUMMIT_STARTUP_TRACE, cmd/summit/startuptrace.go) split
#                it: exec→main, main→wired, wired→program (Bubble Tea starts), program→frame
#                (the first frame written), and exec→frame written
#   tmux_runs    child processes named tmux that one `summit version` and one workbench start
#                spawned (a tmux on PATH that counts itself), to learn what the terminal supports
#
# Each is the median of RUNS runs (default 30; first_frame FRAMES, default 15), the binaries
# interleaved so a noisy machine hits all alike. Then GODEBUG=inittrace=1 of `summit version`:
# the package initialisers that cost the most.
#
# RT=1 runs every timed process (and the tmux servers, so the panes' programs) under the
# real-time FIFO policy (chrt -f 10, as root): on a machine shared with other work, they then
# run as on an idle one, ahead of everything else. Without it, a load average above the core
# count makes the figures noise.
#
# Usage: testdata/perf/startup.sh [BIN...]   (default: builds ./cmd/summit)
# e.g. another checkout's binary against this one's, in the same loop:
#   (cd ../main && go build -o /tmp/old ./cmd/summit) && go build -o /tmp/new ./cmd/summit &&
#   testdata/perf/startup.sh /tmp/old /tmp/new
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-30} FRAMES=${FRAMES:-15}
rt=()
if [ -n "${RT:-}" ]; then rt=(chrt -f 10); fi
tmp=$(mktemp -d)
trap 'for s in "$tmp"/s*.sock; do tmux -S "$s" kill-server 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
	go build -o "$tmp/summit" ./cmd/summit
	bins=("$tmp/summit")
fi

# timer: runs a command N times and prints each run's wall time in ms (exec to exit), or
# starts it in a tmux pane and prints the time from its exec to the first capture of the pane
# that matches a regexp.
mkdir -p "$tmp/timer"
cat >"$tmp/timer/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	switch os.Args[1] {
	case "run": // run N CMD ARGS...: each run's wall time (to $TIMER_OUT, else stdout)
		n, _ := strconv.Atoi(os.Args[2])
		out := os.Stdout
		if f := os.Getenv("TIMER_OUT"); f != "" {
			var err error
			if out, err = os.Create(f); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		for range n {
			c := exec.Command(os.Args[3], os.Args[4:]...)
			if os.Getenv("TIMER_TTY") != "" {
				c.Stdout = os.Stdout // the terminal
			}
			t := time.Now()
			if err := c.Run(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			wall := time.Since(t)
			cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
			fmt.Fprintf(out, "%.2f %.2f\n", float64(wall.Microseconds())/1000, float64(cpu.Microseconds())/1000)
		}
	case "frame": // frame SOCK T0FILE REGEXP: wait for the pane, print exec→frame
		sock, t0file, re := os.Args[2], os.Args[3], regexp.MustCompile(os.Args[4])
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			out, _ := exec.Command("tmux", "-S", sock, "capture-pane", "-p", "-t", "f").Output()
			if re.Match(out) {
				seen := time.Now()
				b, err := os.ReadFile(t0file)
				ns, err2 := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				if err != nil || err2 != nil {
					fmt.Fprintln(os.Stderr, "no start time")
					os.Exit(1)
				}
				fmt.Printf("%.2f\n", float64(seen.UnixNano()-ns)/1e6)
				return
			}
		}
		fmt.Fprintln(os.Stderr, "the header never showed")
		os.Exit(1)
	}
}
GO
(cd "$tmp/timer" && printf 'module timer\n\ngo 1.22\n' >go.mod && go build -o "$tmp/t" .)

# The baselines: a Go hello-world, and the same importing glamour with summit's module
# versions (its go.mod and go.sum under another module name), built with this same toolchain.
mkdir -p "$tmp/hello" "$tmp/floor"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$tmp/hello/main.go"
(cd "$tmp/hello" && printf 'module hello\n\ngo 1.22\n' >go.mod && go build -o "$tmp/hello-world" .)
printf 'package main\n\nimport (\n\t"fmt"\n\n\t_ "charm.land/glamour/v2"\n)\n\nfunc main() { fmt.Println("hello") }\n' >"$tmp/floor/main.go"
sed 's|^module .*|module floor|' go.mod >"$tmp/floor/go.mod"
cp go.sum "$tmp/floor/go.sum"
(cd "$tmp/floor" && go build -o "$tmp/glamour-floor" .)
base=("$tmp/hello-world" "$tmp/glamour-floor")
# Each tmux server gets a socket of its own: a new one does not wait for the last to go.
nsock=0 sock=
T() { "${rt[@]}" tmux -S "$sock" "$@"; }
fresh() {
	[ -z "$sock" ] || tmux -S "$sock" kill-server 2>/dev/null || true
	nsock=$((nsock + 1))
	sock=$tmp/s$nsock.sock
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# A tmux on PATH that counts its runs, in front of the real one.
mkdir -p "$tmp/fake" "$tmp/ws" "$tmp/cfg"
printf '#!/bin/sh\necho "$*" >>%s/tmux.log\nexec %s "$@"\n' "$tmp" "$(command -v tmux)" >"$tmp/fake/tmux"
chmod +x "$tmp/fake/tmux"

for ((b = 0; b < ${#bins[@]}; b++)); do : >"$tmp/res$b"; done
for ((b = 0; b < ${#base[@]}; b++)); do : >"$tmp/base$b"; done
for ((r = 0; r < 3; r++)); do
	for ((b = 0; b < ${#base[@]}; b++)); do
		"${rt[@]}" "$tmp/t" run $((RUNS / 3)) "${base[$b]}" version | sed 's/^/version /' >>"$tmp/base$b"
	done
	for ((b = 0; b < ${#bins[@]}; b++)); do
		"${rt[@]}" "$tmp/t" run $((RUNS / 3)) "${bins[$b]}" version | sed 's/^/version /' >>"$tmp/res$b"
		fresh
		T -f /dev/null new-session -d -s v -x 200 -y 60 "TIMER_TTY=1 TIMER_OUT=$tmp/tty.txt $tmp/t run $((RUNS / 3)) ${bins[$b]} version; tmux -S $sock wait-for -S done; sleep 60"
		T wait-for done
		awk '{print "version_tty", $1}' "$tmp/tty.txt" >>"$tmp/res$b"
	done
done
for ((i = 0; i < FRAMES; i++)); do
	for ((b = 0; b < ${#bins[@]}; b++)); do
		fresh
		rm -f "$tmp/t0" "$tmp/st"
		T -f /dev/null new-session -d -s f -x 200 -y 60 "cd $tmp/ws && date +%s%N >$tmp/t0 && SUMMIT_STARTUP_TRACE=$tmp/st XDG_CONFIG_HOME=$tmp/cfg exec ${bins[$b]} --no-record"
		sleep 0.05
		"${rt[@]}" "$tmp/t" frame "$sock" "$tmp/t0" 'summit .*running' | sed 's/^/first_frame /' >>"$tmp/res$b"
		sleep 0.2
		# The binary's own marks (SUMMIT_STARTUP_TRACE; a binary older than them writes none).
		[ -s "$tmp/st" ] && awk -v t0="$(cat "$tmp/t0")" '{t[$2] = $1} END {
			if (!("frame" in t)) exit
			printf "ph_main %.2f\nph_wired %.2f\nph_program %.2f\nph_frame %.2f\nwritten %.2f\n", (t["main"] - t0) / 1e6,
				(t["wired"] - t["main"]) / 1e6, (t["program"] - t["wired"]) / 1e6, (t["frame"] - t["program"]) / 1e6, (t["frame"] - t0) / 1e6
		}' "$tmp/st" >>"$tmp/res$b"
	done
done
for ((b = 0; b < ${#bins[@]}; b++)); do
	fresh
	rm -f "$tmp/tmux.log"
	T -f /dev/null new-session -d -s c -x 200 -y 60 "PATH=$tmp/fake:\$PATH ${bins[$b]} version; tmux -S $sock wait-for -S done; sleep 60"
	T wait-for done
	v=$(grep -c . "$tmp/tmux.log" 2>/dev/null || true)
	rm -f "$tmp/tmux.log"
	T new-window -t c "cd $tmp/ws && PATH=$tmp/fake:\$PATH XDG_CONFIG_HOME=$tmp/cfg exec ${bins[$b]} --no-record"
	sleep 2
	w=$(grep -c . "$tmp/tmux.log" 2>/dev/null || true)
	echo "tmux_runs ${v:-0}+${w:-0}" >>"$tmp/res$b"
done
fresh

hello=$(awk '$1 == "version" {print $2}' "$tmp/base0" | median)
echo "medians: version (wall) and cpu of $RUNS runs, first_frame of $FRAMES (ms); tmux_runs: version+workbench"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)${RT:+ (timed runs under chrt -f 10)}"
printf '%-32s %10s %8s %8s %12s %12s %10s\n' binary version cpu ×hello version_tty first_frame tmux_runs
for ((b = 0; b < ${#base[@]}; b++)); do
	v=$(awk '$1 == "version" {print $2}' "$tmp/base$b" | median)
	printf '%-32s %10s %8s %8s %12s %12s %10s\n' "$(basename "${base[$b]}")" "$v" \
		"$(awk '$1 == "version" {print $3}' "$tmp/base$b" | median)" "$(awk -v a="$v" -v h="$hello" 'BEGIN {printf "%.2f", a / h}')" - - -
done
for ((b = 0; b < ${#bins[@]}; b++)); do
	row=()
	v=$(awk '$1 == "version" {print $2}' "$tmp/res$b" | median)
	row+=("$v" "$(awk '$1 == "version" {print $3}' "$tmp/res$b" | median)" "$(awk -v a="$v" -v h="$hello" 'BEGIN {printf "%.2f", a / h}')")
	for m in version_tty first_frame; do
		row+=("$(awk -v m=$m '$1 == m {print $2}' "$tmp/res$b" | median)")
	done
	row+=("$(awk '$1 == "tmux_runs" {print $2}' "$tmp/res$b")")
	printf '%-32s %10s %8s %8s %12s %12s %10s\n' "$(basename "${bins[$b]}")" "${row[@]}"
done
echo
echo "first frame, by the binary's marks (medians of $FRAMES, ms): exec→main is the process start (its"
echo "initialisers), main→wired reads config, agents and tapes and starts the session, wired→program"
echo "builds the model, program→frame is Bubble Tea's start and its first frame tick, written is"
echo "exec→frame written (first_frame above adds tmux drawing it and the capture that sees it)"
printf '%-32s %10s %10s %10s %10s %10s\n' binary exec→main main→wired →program →frame written
for ((b = 0; b < ${#bins[@]}; b++)); do
	row=()
	for m in ph_main ph_wired ph_program ph_frame written; do
		row+=("$(awk -v m=$m '$1 == m {print $2}' "$tmp/res$b" | median)")
	done
	printf '%-32s %10s %10s %10s %10s %10s\n' "$(basename "${bins[$b]}")" "${row[@]}"
done
for bin in "${base[1]}" "${bins[@]}"; do
	echo
	echo "$(basename "$bin"): GODEBUG=inittrace=1 $bin version, the costliest initialisers (median clock of 5 runs):"
	for i in 1 2 3 4 5; do "${rt[@]}" env GODEBUG=inittrace=1 "$bin" version 2>&1 >/dev/null; done |
		awk '/^init / {print $2, $5}' | sort | awk '{v[$1] = v[$1] " " $2} END {for (p in v) print p, v[p]}' |
		awk '{n = split(substr($0, length($1) + 2), a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}; printf "%8.2f ms  %s\n", a[int((n + 1) / 2)], $1}' |
		sort -gr | awk 'NR <= 8'
	echo "  all initialisers: $(for i in 1 2 3 4 5; do "${rt[@]}" env GODEBUG=inittrace=1 "$bin" version 2>&1 >/dev/null | awk '/^init / {s += $5} END {print s}'; done | median) ms (median of 5)"
	echo "  summit's own packages: $(for i in 1 2 3 4 5; do "${rt[@]}" env GODEBUG=inittrace=1 "$bin" version 2>&1 >/dev/null | awk '/^init github.com\/summit-dev\// {s += $5} END {print s + 0}'; done | median) ms (median of 5)"
done
