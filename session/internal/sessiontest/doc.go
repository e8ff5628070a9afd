// Package sessiontest holds the fixtures the tests of session, session/record and
// session/render share: a session that uses every event type, the builder that stamps it, and
// the fold and state dump the tests compare.
package sessiontest
