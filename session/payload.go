package session

import (
	"fmt"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
)

func decodeAs[T Data](raw []byte) (Data, error) {
	var v T
	if raw[0] != '{' {
		return nil, fmt.Errorf(`"data" must be an object`)
	}
	// UnmarshalOf keeps v on the stack (Unmarshal(raw, &v) would move it to the heap): one
	// allocation less per event, the same result and errors.
	if err := json.UnmarshalOf(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Decoders is the closed set of schema v1 types; Type.Known and the fold's exhaustiveness test
// are both checked against it.
var Decoders = map[Type]func([]byte) (Data, error){
	TypeSessionStarted:        decodeAs[SessionStarted],
	TypeSessionEnded:          decodeAs[SessionEnded],
	TypeSessionForked:         decodeAs[SessionForked],
	TypeCommandIssued:         decodeAs[CommandIssued],
	TypeCommandRejected:       decodeAs[CommandRejected],
	TypeUserNote:              decodeAs[UserNote],
	TypeSubagentSpawned:       decodeAs[SubagentSpawned],
	TypeSubagentActive:        decodeAs[SubagentActive],
	TypeSubagentStop:          decodeAs[SubagentStop],
	TypeSubagentError:         decodeAs[SubagentError],
	TypeSubagentTimeout:       decodeAs[SubagentTimeout],
	TypeSubagentCancelled:     decodeAs[SubagentCancelled],
	TypeTranscriptEvent:       decodeAs[TranscriptEvent],
	TypePermissionRequested:   decodeAs[PermissionRequested],
	TypePermissionGranted:     decodeAs[PermissionGranted],
	TypePermissionDenied:      decodeAs[PermissionDenied],
	TypeHandoffInitiated:      decodeAs[HandoffInitiated],
	TypeHandoffComplete:       decodeAs[HandoffComplete],
	TypeHandoffResolved:       decodeAs[HandoffResolved],
	TypeConvergenceInitiated:  decodeAs[ConvergenceInitiated],
	TypeConflictDetected:      decodeAs[ConflictDetected],
	TypeConflictReviewRequest: decodeAs[ConflictReviewRequest],
	TypeManualReviewRequired:  decodeAs[ManualReviewRequired],
	TypeConflictResolved:      decodeAs[ConflictResolved],
	TypeConvergenceComplete:   decodeAs[ConvergenceComplete],
	TypeConvergedResult:       decodeAs[ConvergedResult],
	TypeDeltaBatch:            decodeAs[DeltaBatch],
	TypeDeltaBatchApplied:     decodeAs[DeltaBatchApplied],
	TypeSubagentIsolated:      decodeAs[SubagentIsolated],
	TypeSubagentChanges:       decodeAs[SubagentChanges],
	TypeChangesApplied:        decodeAs[ChangesApplied],
	TypeApplyUndone:           decodeAs[ApplyUndone],
	TypeWorktreeDiscarded:     decodeAs[WorktreeDiscarded],
	TypeChangesRebased:        decodeAs[ChangesRebased],
	TypeModelRouted:           decodeAs[ModelRouted],
	TypeModelSwitched:         decodeAs[ModelSwitched],
	TypeModelTurn:             decodeAs[ModelTurn],
	TypeHookRan:               decodeAs[HookRan],
	TypeVerifyRan:             decodeAs[VerifyRan],
	TypeWorkspaceTrusted:      decodeAs[WorkspaceTrusted],
	TypeRunnerCursor:          decodeAs[RunnerCursor],
}

// LineRange is a conflict's line span in a file, written as "40-58" (or "40" for one line).
// Reading is tolerant: "40-58", "40", 40, [40,58] and {"start":40,"end":58} all decode.
type LineRange struct {
	Start, End int
}

func (r LineRange) IsZero() bool { return r.Start == 0 && r.End == 0 }

func (r LineRange) String() string {
	switch {
	case r.IsZero():
		return ""
	case r.End <= r.Start:
		return strconv.Itoa(r.Start)
	}
	return strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
}

func (r LineRange) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, r.String()), nil
}

func (r *LineRange) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	bad := fmt.Errorf(`"lines" must look like "40-58", 40, [40,58] or {"start":40,"end":58}, got %s`, truncate(string(b), 40))
	num := func(x any) (int, bool) {
		f, ok := x.(float64)
		return int(f), ok && f >= 0 && f == float64(int(f))
	}
	switch x := v.(type) {
	case nil:
		*r = LineRange{}
	case float64:
		n, ok := num(x)
		if !ok {
			return bad
		}
		*r = LineRange{n, n}
	case string:
		if x == "" {
			*r = LineRange{}
			return nil
		}
		a, b, found := strings.Cut(x, "-")
		s, err1 := strconv.Atoi(strings.TrimSpace(a))
		e := s
		var err2 error
		if found {
			e, err2 = strconv.Atoi(strings.TrimSpace(b))
		}
		if err1 != nil || err2 != nil || s < 0 || e < s {
			return bad
		}
		*r = LineRange{s, e}
	case []any:
		if len(x) == 0 || len(x) > 2 {
			return bad
		}
		s, ok1 := num(x[0])
		e, ok2 := s, true
		if len(x) == 2 {
			e, ok2 = num(x[1])
		}
		if !ok1 || !ok2 || e < s {
			return bad
		}
		*r = LineRange{s, e}
	case map[string]any:
		s, ok1 := num(x["start"])
		e, ok2 := num(x["end"])
		if _, has := x["end"]; !has {
			e, ok2 = s, ok1
		}
		if !ok1 || !ok2 || e < s {
			return bad
		}
		*r = LineRange{s, e}
	default:
		return bad
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
