// Package ui is the workbench: a Bubble Tea v2 program that renders a session.State and
// turns keys into intents.
//
// Data flow: the orchestrator's events reach the model through a Bridge (one EventsMsg per
// frame, never dropping one) and are folded with session.Apply into the model's own State —
// the fold a replay runs, so a live session and its replay render the same. Intents leave as
// slash commands sent to a Backend inside a tea.Cmd (approving a request is "/approve pr-3",
// resolving a conflict is "/resolve cf-1 --choose sa-2"), so every decision made in the UI
// is recorded like a typed one. Update and View never block and never do I/O.
//
// Layout: header; tree | transcript; notice line; input; footer of key hints built from the
// KeyMap. Below 60×15 the screen says so. Transcripts render only their visible rows (see
// tview); glamour runs once per capsule and width. The tree draws only its visible rows and
// keeps its order and each row's pieces between frames; a batch of tokens alone does not list
// it again: its figures (tokens, elapsed) move with the spinner's tick (every 120 ms), any
// other event shows at once, so 1,000 streaming subagents cost the tree 8 listings a second,
// not 30 (tree.go, treeRows). Every piece of model or tool text passes
// session.Sanitize before it is drawn, so no control sequence from it reaches the terminal.
//
// Decisions (permission requests, conflict reviews) wait in one approvals inbox (inbox.go),
// oldest first, answered in place: a number or ↑↓ selects, enter confirms, so no single key
// decides. The inbox takes the keys only when it opens while the user is idle; a key that is
// not one of its choices docks it and goes to the input, so nothing typed is lost and nothing
// typed for something else answers it. Replay (Replay) drives the same model from an indexed
// recording, with play/pause, speed, an idle cap, stepping, markers, seeking by percent or
// seq, and checkpoints for seeking backwards.
//
// Keys are data (KeyMap, grouped by pane for the help screen); the footer lists the keys of
// the focused pane. Esc then a fast key arrives from terminals as Alt+key and is split back.
package ui
