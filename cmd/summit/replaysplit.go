package main

import (
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/cmd/summit/internal/idlecores"
	"github.com/summit-dev/summit/session/record"
	"github.com/summit-dev/summit/ui"
)

// replaySplitUI opens two recordings side by side (replay A --beside B): A leads first, and B
// follows it by seq or by time (ui.Split). --speed and --from apply to A; B starts at the
// point synchronised with it.
func replaySplitUI(pathA, pathB string, sync ui.SyncMode, lenient bool, speed float64, from uint64) error {
	if err := needTerminal(); err != nil {
		return err
	}
	opts := record.ReadOptions{Lenient: lenient}
	a, err := ui.OpenReplay(pathA, opts)
	if err != nil {
		return badFile(err)
	}
	defer a.Close()
	b, err := ui.OpenReplay(pathB, opts)
	if err != nil {
		return badFile(err)
	}
	defer b.Close()
	a.Speed = speed
	if from > 0 {
		if err := a.SeekSeq(from); err != nil {
			return usageErr("--from: %v", err)
		}
	}
	s := ui.NewSplit(a, b, [2]string{filepath.Base(pathA), filepath.Base(pathB)}, sync, ui.Options{})
	cores := idlecores.New(time.Second, func() bool { return !a.CaughtUp() || !b.CaughtUp() })
	_, err = tea.NewProgram(s, tea.WithFPS(ui.FrameRate), tea.WithColorProfile(colorProfile()), tea.WithFilter(cores.Filter)).Run()
	cores.Stop() // before a fork's workbench starts, which must find every core
	if err != nil {
		return badFile(err)
	}
	if pane, seq := s.ForkAt(); seq > 0 {
		// F twice in the leading pane: that recording continues live from the event shown.
		a.Close()
		b.Close()
		return forkWorkbench([2]string{pathA, pathB}[pane], seq, os.Stderr)
	}
	return nil
}
