package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/summit-dev/summit/session"
)

// Metrics are the session metrics of seed 004 ("Metrics Tracking"): spawn and success rates,
// average completion time by agent type, permission escalations, convergence conflict rate,
// timeouts and retries; plus event counts by type, the session id and the duration. They are
// derived from a folded State, never stored, so a replay computes the same figures.
type Metrics struct {
	SessionID string `json:"session_id"`
	// ForkedFrom is a fork's lineage: its parent at the fork point first, then the parent's
	// own parents (absent for a session that is not a fork).
	ForkedFrom []session.ForkParent `json:"forked_from,omitempty"`
	StartedAt  string               `json:"started_at"`
	EndedAt    string               `json:"ended_at,omitempty"`
	EndReason  string               `json:"end_reason,omitempty"`
	Ended      bool                 `json:"ended"`
	DurationMS int64                `json:"duration_ms"`

	Events        int            `json:"events"`
	EventsByType  map[string]int `json:"events_by_type"`
	UnknownEvents int            `json:"unknown_events"`

	Commands         int `json:"commands"`
	CommandsRejected int `json:"commands_rejected"`

	Spawns          int                `json:"spawns"`
	SpawnsPerMinute float64            `json:"spawns_per_minute"`
	Stopped         int                `json:"stopped"`
	Succeeded       int                `json:"succeeded"`
	SuccessRate     float64            `json:"success_rate"`
	Outcomes        map[string]int     `json:"outcomes"`
	ByAgentType     []AgentTypeMetrics `json:"by_agent_type"`

	PermissionRequests  int     `json:"permission_requests"`
	PermissionsGranted  int     `json:"permissions_granted"`
	PermissionsDenied   int     `json:"permissions_denied"`
	EscalationsPerSpawn float64 `json:"escalations_per_spawn"`
	PolicyDenials       int     `json:"policy_denials"`

	Handoffs                  int     `json:"handoffs"`
	Convergences              int     `json:"convergences"`
	ConvergencesWithConflicts int     `json:"convergences_with_conflicts"`
	ConflictRate              float64 `json:"conflict_rate"`
	Conflicts                 int     `json:"conflicts"`
	ConflictsResolved         int     `json:"conflicts_resolved"`
	ConflictsUnresolved       int     `json:"conflicts_unresolved"`

	Timeouts      int `json:"timeouts"`
	Retries       int `json:"retries"`
	Errors        int `json:"errors"`
	Cancellations int `json:"cancellations"`
	ToolCalls     int `json:"tool_calls"`

	// CostUSD is what the priced subagents cost (config prices); CostPriced counts them and
	// CostUnpriced the ones whose models have no price, whose cost is unknown.
	CostUSD      float64 `json:"cost_usd"`
	CostPriced   int     `json:"cost_priced_subagents"`
	CostUnpriced int     `json:"cost_unpriced_subagents"`

	// Verifications are, for each subagent or convergence that has either, what its agent
	// claimed (a capsule's verification) and what summit measured (VerifyRan), apart.
	Verifications []VerificationMetrics `json:"verifications,omitempty"`
	VerifyRuns    int                   `json:"verify_runs,omitempty"`
	VerifyFailed  int                   `json:"verify_failed,omitempty"`
}

// VerificationMetrics keep an agent's claim and summit's measurement of one subagent or
// convergence apart: Claimed is the capsule's verification status, the agent's own word;
// Measured is summit's last VerifyRan of it.
type VerificationMetrics struct {
	ID       string             `json:"id"`
	Claimed  string             `json:"claimed,omitempty"`
	Measured *session.VerifyRan `json:"measured,omitempty"`
}

// AgentTypeMetrics are one agent type's figures.
type AgentTypeMetrics struct {
	AgentType       string  `json:"agent_type"`
	Spawned         int     `json:"spawned"`
	Stopped         int     `json:"stopped"`
	Succeeded       int     `json:"succeeded"`
	SuccessRate     float64 `json:"success_rate"`
	AvgCompletionMS int64   `json:"avg_completion_ms"`
	CostUSD         float64 `json:"cost_usd"`
}

// ComputeMetrics derives the metrics of a folded state. Rates with a zero denominator are 0.
func ComputeMetrics(s *session.State) Metrics {
	c := s.Counters
	m := Metrics{
		SessionID: s.SessionID, ForkedFrom: forkLineage(s.Fork), Ended: s.Ended, EndReason: s.EndReason,
		EventsByType: map[string]int{}, Outcomes: map[string]int{}, UnknownEvents: c.Unknown,
		Commands: c.Commands, CommandsRejected: c.Rejected, Spawns: c.Spawns,
		PermissionRequests: c.PermissionRequests, PermissionsGranted: c.Granted,
		PermissionsDenied: c.Denied, PolicyDenials: c.PolicyDenials, Handoffs: c.Handoffs,
		Convergences: c.Convergences, ConvergencesWithConflicts: c.ConvergencesWithConflicts,
		Conflicts: c.Conflicts, ConflictsResolved: c.Resolutions, Timeouts: c.Timeouts,
		Retries: c.Retries, Errors: c.Errors, Cancellations: c.Cancellations, ToolCalls: c.ToolCalls,
		ByAgentType: []AgentTypeMetrics{}, CostUSD: c.CostUSD, CostPriced: c.Priced, CostUnpriced: c.Unpriced,
	}
	if s.Started {
		m.StartedAt = s.StartedAt.UTC().Format(session.TimeLayout)
		end := s.LastTS
		if s.Ended {
			end = s.EndedAt
			m.EndedAt = s.EndedAt.UTC().Format(session.TimeLayout)
		}
		m.DurationMS = end.Sub(s.StartedAt).Milliseconds()
	}
	for t, n := range c.Events {
		m.EventsByType[string(t)] = n
		m.Events += n
	}
	for o, n := range c.Outcomes {
		m.Outcomes[o] = n
		m.Stopped += n
	}
	m.Succeeded = c.Outcomes[session.OutcomeSuccess]
	m.SuccessRate = ratio(m.Succeeded, m.Stopped)
	if m.DurationMS > 0 {
		m.SpawnsPerMinute = float64(m.Spawns) / (float64(m.DurationMS) / float64(time.Minute/time.Millisecond))
	}
	m.VerifyRuns, m.VerifyFailed = c.Verifies, c.VerifiesFailed
	for _, sa := range s.Subagents {
		vm := VerificationMetrics{ID: sa.ID, Measured: sa.Verify}
		if cp := sa.Capsule; cp != nil && cp.Verification != nil {
			vm.Claimed = orDash(session.Sanitize(cp.Verification.Status))
		}
		if vm.Claimed != "" || vm.Measured != nil {
			m.Verifications = append(m.Verifications, vm)
		}
	}
	for _, cv := range s.Convergences {
		if cv.Verify != nil {
			m.Verifications = append(m.Verifications, VerificationMetrics{ID: cv.ID, Measured: cv.Verify})
		}
	}
	m.EscalationsPerSpawn = ratio(c.PermissionRequests, c.Spawns)
	m.ConflictRate = ratio(c.ConvergencesWithConflicts, c.Convergences)
	m.ConflictsUnresolved = c.Conflicts - c.Resolutions
	types := make([]string, 0, len(c.ByAgentType))
	for t := range c.ByAgentType {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		tc := c.ByAgentType[t]
		am := AgentTypeMetrics{AgentType: t, Spawned: tc.Spawned, Stopped: tc.Stopped,
			Succeeded: tc.Succeeded, SuccessRate: ratio(tc.Succeeded, tc.Stopped), CostUSD: tc.CostUSD}
		if tc.Stopped > 0 {
			am.AvgCompletionMS = tc.TotalDurationMS / int64(tc.Stopped)
		}
		m.ByAgentType = append(m.ByAgentType, am)
	}
	return m
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// WriteText writes the metrics as an aligned, human-readable report.
func (m Metrics) WriteText(w io.Writer) error {
	var b strings.Builder
	row := func(k string, format string, args ...any) {
		fmt.Fprintf(&b, "%-28s %s\n", k, fmt.Sprintf(format, args...))
	}
	row("session", "%s", m.SessionID)
	for i, p := range m.ForkedFrom {
		label := "forked from"
		if i > 0 {
			label = "  which forked from"
		}
		row(label, "%s at #%d (%s)", p.SessionID, p.Seq, orDash(p.Path))
	}
	end := "not ended (no SessionEnded)"
	if m.Ended {
		end = fmt.Sprintf("%s (%s)", m.EndedAt, m.EndReason)
	}
	row("started", "%s", m.StartedAt)
	row("ended", "%s", end)
	row("duration", "%s", fmtMS(m.DurationMS))
	row("events", "%d (%d of unknown types)", m.Events, m.UnknownEvents)
	row("commands", "%d issued, %d rejected", m.Commands, m.CommandsRejected)
	row("subagents spawned", "%d (%.2f per minute)", m.Spawns, m.SpawnsPerMinute)
	row("success rate", "%s (%d of %d stopped)", pct(m.SuccessRate), m.Succeeded, m.Stopped)
	row("outcomes", "%s", fmtCounts(m.Outcomes))
	row("permission escalations", "%s, %d granted, %d denied (%.2f per spawn)",
		session.Plural(m.PermissionRequests, "request"), m.PermissionsGranted, m.PermissionsDenied, m.EscalationsPerSpawn)
	row("policy denials", "%d", m.PolicyDenials)
	row("handoffs", "%d", m.Handoffs)
	row("convergence conflict rate", "%s (%d of %d convergences)", pct(m.ConflictRate), m.ConvergencesWithConflicts, m.Convergences)
	row("conflicts", "%d, %d resolved, %d unresolved", m.Conflicts, m.ConflictsResolved, m.ConflictsUnresolved)
	row("timeouts", "%d", m.Timeouts)
	row("retries", "%d", m.Retries)
	row("errors", "%d", m.Errors)
	row("cancellations", "%d", m.Cancellations)
	row("tool calls", "%d", m.ToolCalls)
	if m.CostPriced+m.CostUnpriced > 0 {
		row("cost", "$%.4f for %d priced (%d on models with no price: unknown)", m.CostUSD, m.CostPriced, m.CostUnpriced)
	}
	if len(m.Verifications) > 0 {
		// The two are never merged: an agent saying its tests pass is not a measurement.
		fmt.Fprintf(&b, "\nverification (claims: the agent's own word; measured: summit's VerifyRan, %d run, %d failed)\n", m.VerifyRuns, m.VerifyFailed)
		for _, v := range m.Verifications {
			claim := "claims: nothing"
			if v.Claimed != "" {
				claim = "claims: " + v.Claimed
			}
			measured := "measured: not by summit"
			if v.Measured != nil {
				measured = v.Measured.Measured()
			}
			fmt.Fprintf(&b, "  %-8s %-24s %s\n", v.ID, claim, measured)
		}
	}
	b.WriteString("\nby agent type                spawned  stopped  success  avg completion\n")
	if len(m.ByAgentType) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, a := range m.ByAgentType {
		fmt.Fprintf(&b, "  %-26s %7d  %7d  %7s  %s\n", a.AgentType, a.Spawned, a.Stopped, pct(a.SuccessRate), fmtMS(a.AvgCompletionMS))
	}
	if m.CostPriced > 0 {
		b.WriteString("\ncost by agent type\n")
		for _, a := range m.ByAgentType {
			if a.CostUSD > 0 {
				fmt.Fprintf(&b, "  %-26s $%.4f\n", a.AgentType, a.CostUSD)
			}
		}
	}
	b.WriteString("\nevents by type\n")
	for _, k := range sortedKeys(m.EventsByType) {
		fmt.Fprintf(&b, "  %-26s %7d\n", k, m.EventsByType[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

func fmtMS(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}

func fmtCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// forkLineage is a fork's parents, nearest first (nil for a session that is not a fork).
func forkLineage(f *session.SessionForked) []session.ForkParent {
	if f == nil {
		return nil
	}
	first := f.Parent
	first.Lineage = nil
	return append([]session.ForkParent{first}, f.Parent.Lineage...)
}
