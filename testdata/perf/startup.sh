#!/usr/bin/env bash
# startup.sh: how fast summit starts, on the real binary.
#
#   version      `summit version`, its output to /dev/null: the process's whole life
#   version_tty  the same in a terminal (a tmux pane at 200×60; inside tmux, as people run it)
#   first_frame  `summit` (the workbench, an empty workspace, --no-record) in a tmux pane at
#                200×60: from the exec to the first capture of the pane that shows the header
#   tmux_runs    child processes named tmux that one `summit version` and one workbench start
#                spawned (a tmux on PATH that counts itself), to learn what the terminal supports
#
# Each is the median of RUNS runs (default 30; first_frame FRAMES, default 15), the binaries
# interleaved so a noisy machine hits all alike. Then GODEBUG=inittrace=1 of `summit version`:
# the package initialisers that cost the most.
#
# Usage: testdata/perf/startup.sh [BIN...]   (default: builds ./cmd/summit)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-30} FRAMES=${FRAMES:-15}
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
			fmt.Fprintf(out, "%.2f\n", float64(time.Since(t).Microseconds())/1000)
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
# Each tmux server gets a socket of its own: a new one does not wait for the last to go.
nsock=0 sock=
T() { tmux -S "$sock" "$@"; }
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
for ((r = 0; r < 3; r++)); do
	for ((b = 0; b < ${#bins[@]}; b++)); do
		"$tmp/t" run $((RUNS / 3)) "${bins[$b]}" version | sed 's/^/version /' >>"$tmp/res$b"
		fresh
		T -f /dev/null new-session -d -s v -x 200 -y 60 "TIMER_TTY=1 TIMER_OUT=$tmp/tty.txt $tmp/t run $((RUNS / 3)) ${bins[$b]} version; tmux -S $sock wait-for -S done; sleep 60"
		T wait-for done
		sed 's/^/version_tty /' "$tmp/tty.txt" >>"$tmp/res$b"
	done
done
for ((i = 0; i < FRAMES; i++)); do
	for ((b = 0; b < ${#bins[@]}; b++)); do
		fresh
		rm -f "$tmp/t0"
		T -f /dev/null new-session -d -s f -x 200 -y 60 "cd $tmp/ws && date +%s%N >$tmp/t0 && XDG_CONFIG_HOME=$tmp/cfg exec ${bins[$b]} --no-record"
		sleep 0.05
		"$tmp/t" frame "$sock" "$tmp/t0" 'summit .*running' | sed 's/^/first_frame /' >>"$tmp/res$b"
		sleep 0.2
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

echo "medians: version of $RUNS runs, first_frame of $FRAMES (ms); tmux_runs: version+workbench"
printf '%-32s %10s %12s %12s %10s\n' binary version version_tty first_frame tmux_runs
for ((b = 0; b < ${#bins[@]}; b++)); do
	row=()
	for m in version version_tty first_frame; do
		row+=("$(awk -v m=$m '$1 == m {print $2}' "$tmp/res$b" | median)")
	done
	row+=("$(awk '$1 == "tmux_runs" {print $2}' "$tmp/res$b")")
	printf '%-32s %10s %12s %12s %10s\n' "$(basename "${bins[$b]}")" "${row[@]}"
done
for ((b = 0; b < ${#bins[@]}; b++)); do
	echo
	echo "$(basename "${bins[$b]}"): GODEBUG=inittrace=1 ${bins[$b]} version, the costliest initialisers (median clock of 5 runs):"
	for i in 1 2 3 4 5; do GODEBUG=inittrace=1 "${bins[$b]}" version 2>&1 >/dev/null; done |
		awk '/^init / {print $2, $5}' | sort | awk '{v[$1] = v[$1] " " $2} END {for (p in v) print p, v[p]}' |
		awk '{n = split(substr($0, length($1) + 2), a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}; printf "%8.2f ms  %s\n", a[int((n + 1) / 2)], $1}' |
		sort -gr | awk 'NR <= 8'
	echo "  all initialisers: $(for i in 1 2 3 4 5; do GODEBUG=inittrace=1 "${bins[$b]}" version 2>&1 >/dev/null | awk '/^init / {s += $5} END {print s}'; done | median) ms (median of 5)"
done
