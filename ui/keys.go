package ui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the workbench answers, as data: the footer and the help screen are
// built from it, grouped by the pane or mode where each key works, so they cannot drift from
// what the keys do and never name a key that does nothing where the focus is.
type KeyMap struct {
	// Everywhere (live).
	Focus, Slash, Inbox, Help, Quit key.Binding
	// Input.
	Complete, History, Submit, Clear key.Binding
	// Tree.
	Select, Open, Filter, Resize, TreeBack key.Binding
	// Group cycles the tree's grouping; Fold folds a group; NextWaiting jumps to what waits.
	Group, Fold, NextWaiting key.Binding
	// Transcript.
	Scroll, Page, Follow, Top, Expand, Thinking, Search, Back key.Binding
	// SearchStep steps through a search's matches (after ctrl+f … enter).
	SearchStep key.Binding
	// Prompts and the inbox.
	Choose, Confirm, NextItem, Close key.Binding
	// Output panels (/status, /help, /agents).
	PanelScroll, PanelClose key.Binding
	// Replay.
	Play, Step, Markers, Speed, IdleCap, Seek, Fork, ReplayQuit key.Binding
}

// DefaultKeyMap is the key map of the workbench.
func DefaultKeyMap() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], help))
	}
	h := func(label, help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(label, help))
	}
	return KeyMap{
		Focus: h("tab", "next pane", "tab"),
		Slash: h("/", "command (from any pane)", "/"),
		Inbox: h("ctrl+o", "inbox (or /inbox: every waiting approval and review)", "ctrl+o"),
		Help:  b("help", "?"),
		Quit:  h("ctrl+c", "quit (asks while subagents run)", "ctrl+c"),

		Complete: h("tab", "complete (a /command, flag or id)", "tab"),
		History:  h("↑↓", "history", "up", "down"),
		Submit:   h("enter", "send", "enter"),
		Clear:    h("esc", "close completion · empty line: tree", "esc"),

		Select:   h("↑↓", "select", "up", "down", "k", "j"),
		Open:     h("enter", "open (in the transcript)", "enter"),
		Filter:   h("f", "filter (a filter: line shows it)", "f"),
		Resize:   h("< >", "narrower / wider", "<", ">"),
		TreeBack: h("esc", "clear the filter · input", "esc"),

		Group:       h("g", "group by none / runner / type / state", "g"),
		Fold:        h("enter", "on a group: fold / unfold it", "enter"),
		NextWaiting: h("w", "next subagent or review that waits for you", "w"),

		Scroll:   h("↑↓", "scroll", "up", "down", "k", "j"),
		Page:     h("pgup pgdn", "page", "pgup", "pgdown", "space"),
		Follow:   h("G", "follow (the tail)", "G", "end"),
		Top:      h("g", "top", "g", "home"),
		Expand:   h("enter", "expand (tool calls)", "enter"),
		Thinking: h("t", "thinking (on/off)", "t"),
		Search:   h("ctrl+f", "search (enter: find, with a count)", "ctrl+f"),
		Back:     h("esc", "tree", "esc"),

		SearchStep: h("n N", "next / previous match (wraps around)", "n", "N"),

		Choose:   h("↑↓ 1-9", "select", "up", "down", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
		Confirm:  h("enter", "confirm", "enter"),
		NextItem: h("tab", "next item", "tab", "shift+tab"),
		Close:    h("esc", "close (ctrl+o reopens)", "esc"),

		PanelScroll: h("↑↓ pgup pgdn", "scroll", "up", "down", "pgup", "pgdown"),
		PanelClose:  h("esc", "close", "esc", "q"),

		Play:       h("space", "play / pause", "space"),
		Step:       h(". ,", "step forward / back", ".", ","),
		Markers:    h("] [", "next / previous marker", "]", "["),
		Speed:      h("+ -", "faster / slower", "+", "=", "-"),
		IdleCap:    h("c", "idle cap on/off", "c"),
		Seek:       h("0-9 $ :", "seek to 0–90 %, the end, a seq", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "$", ":"),
		Fork:       h("F", "fork: a live session from here (F again confirms)", "F"),
		ReplayQuit: h("ctrl+c", "quit", "ctrl+c"),
	}
}

// keyGroup is one section of the help screen.
type keyGroup struct {
	title string
	keys  []key.Binding
}

// helpGroups lists the keys by pane and mode. A replay takes no input and no commands, so
// it lists only what works there.
func (k KeyMap) helpGroups(replay bool) []keyGroup {
	if replay {
		return []keyGroup{
			{"replay", []key.Binding{k.Play, k.Step, k.Markers, k.Speed, k.IdleCap, k.Seek, k.Fork, k.Focus, k.Help, k.ReplayQuit}},
			{"tree", []key.Binding{k.Select, k.Open, k.Filter, k.Group, k.Fold, k.Resize}},
			{"transcript", []key.Binding{k.Scroll, k.Page, k.Follow, k.Top, k.Expand, k.Thinking, k.Search, k.SearchStep, k.Back}},
		}
	}
	return []keyGroup{
		{"everywhere", []key.Binding{k.Focus, k.Slash, k.Inbox, k.Help, k.Quit}},
		{"input", []key.Binding{k.Complete, k.History, k.Submit, k.Clear}},
		{"tree", []key.Binding{k.Select, k.Open, k.Filter, k.Group, k.Fold, k.NextWaiting, k.Resize, k.TreeBack}},
		{"transcript", []key.Binding{k.Scroll, k.Page, k.Follow, k.Top, k.Expand, k.Thinking, k.Search, k.SearchStep, k.Back}},
		{"prompts and inbox", []key.Binding{k.Choose, k.Confirm, k.NextItem, k.Close}},
		{"output panels", []key.Binding{k.PanelScroll, k.PanelClose}},
	}
}
