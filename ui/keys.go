package ui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the workbench answers, as data: the footer and the help screen are
// built from it, so they cannot drift from what the keys do.
type KeyMap struct {
	Focus, Up, Down, Open, Filter, Follow, Top  key.Binding
	PageUp, PageDown, Thinking, Search, Help    key.Binding
	Complete, HistPrev, HistNext, Submit, Quit  key.Binding
	Review, Escape                              key.Binding
	Play, Step, NextMark, PrevMark, Faster      key.Binding
	Slower, Seek                                key.Binding
	AllowOnce, AllowSub, Deny, Both, None, Note key.Binding
}

// DefaultKeyMap is the key map of the workbench.
func DefaultKeyMap() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], help))
	}
	return KeyMap{
		Focus:     b("focus", "tab"),
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑↓", "select")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Open:      b("open / expand", "enter"),
		Filter:    b("filter the tree (type)", "/"),
		Follow:    b("follow the tail", "G", "end"),
		Top:       b("top", "g", "home"),
		PageUp:    b("page up", "pgup"),
		PageDown:  b("page down", "pgdown"),
		Thinking:  b("thinking on/off", "t"),
		Search:    b("search", "ctrl+f"),
		Help:      b("help", "?"),
		Complete:  b("complete", "tab"),
		HistPrev:  key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑↓", "history")),
		HistNext:  b("history", "down"),
		Submit:    b("send", "enter"),
		Quit:      b("quit", "ctrl+c"),
		Review:    b("review", "r"),
		Escape:    b("back", "esc"),
		Play:      b("play/pause", "space"),
		Step:      key.NewBinding(key.WithKeys(".", ","), key.WithHelp(". ,", "step")),
		NextMark:  key.NewBinding(key.WithKeys("]", "["), key.WithHelp("[ ]", "markers")),
		PrevMark:  b("previous marker", "["),
		Faster:    key.NewBinding(key.WithKeys("+", "=", "-"), key.WithHelp("+/-", "speed")),
		Slower:    b("slower", "-"),
		Seek:      key.NewBinding(key.WithKeys("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "$", ":"), key.WithHelp("0-9 $ :", "seek %, end, seq")),
		AllowOnce: b("allow once", "a"),
		AllowSub:  b("allow for this subagent", "s"),
		Deny:      b("deny", "d"),
		Both:      b("both", "b"),
		None:      b("none", "n"),
		Note:      b("note", "m"),
	}
}
