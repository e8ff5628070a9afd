// Package ttytest is for tests only: it runs a test binary's helper test in a child process
// whose controlling terminal is a new pseudo-terminal, so a test can show that what summit
// starts from there (an MCP server, an ACP agent, a hook) does not get that terminal.
//
// The protocol between a test and its helper is plain text on the helper's output: the
// helper prints "helper tty_nr=N" (Self) first, N being field 7 of /proc/self/stat (0: no
// controlling terminal), then whatever its test asserts on. Run fails the test when the
// helper did not have the terminal, since then the test proves nothing.
package ttytest
