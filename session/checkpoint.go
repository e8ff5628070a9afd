package session

// Checkpoint returns a frozen copy of s for keeping, the way replay keeps one every few
// megabytes of a recording: like Clone, but it shares with prev (the previous checkpoint of
// the same fold, or nil) every subagent and permission request that has not changed since,
// shares the append-only log, and leaves out the lookup maps. So a checkpoint costs what
// changed since the last one, not the size of the state, and keeping one every K events
// stays linear in the recording.
//
// A checkpoint is never folded into or read directly: Clone it (which rebuilds the maps) and
// use the clone.
func (s *State) Checkpoint(prev *State) *State {
	c := *s
	c.subagents, c.convergences, c.conflicts, c.permissions = nil, nil, nil, nil
	c.Log = s.Log[:len(s.Log):len(s.Log)]
	c.Playbook = append([]PlaybookEntry(nil), s.Playbook...)
	c.Counters = s.Counters.clone()
	var prevSubs []*Subagent
	var prevPerms []*Permission
	if prev != nil {
		prevSubs, prevPerms = prev.Subagents, prev.Permissions
	}
	c.Subagents = make([]*Subagent, len(s.Subagents))
	for i, sa := range s.Subagents {
		// Subagents are only ever appended, so position i is the same subagent in both.
		if i < len(prevSubs) && sameSubagent(sa, prevSubs[i]) {
			c.Subagents[i] = prevSubs[i]
			continue
		}
		n := *sa
		n.Transcript = sa.Transcript.clone()
		n.Switches = append([]ModelSwitched(nil), sa.Switches...)
		c.Subagents[i] = &n
	}
	c.Permissions = make([]*Permission, len(s.Permissions))
	for i, p := range s.Permissions {
		if i < len(prevPerms) && samePermission(p, prevPerms[i]) {
			c.Permissions[i] = prevPerms[i]
			continue
		}
		n := *p
		c.Permissions[i] = &n
	}
	c.Handoffs = make([]*Handoff, len(s.Handoffs))
	for i, h := range s.Handoffs {
		n := *h
		c.Handoffs[i] = &n
	}
	c.Convergences = make([]*Convergence, len(s.Convergences))
	for i, cv := range s.Convergences {
		n := *cv
		n.Members = append([]string(nil), cv.Members...)
		n.Conflicts = make([]*Conflict, len(cv.Conflicts))
		for j, cf := range cv.Conflicts {
			m := *cf
			n.Conflicts[j] = &m
		}
		c.Convergences[i] = &n
	}
	c.Applies = cloneApplies(s.Applies)
	return &c
}

func cloneApplies(as []*Applied) []*Applied {
	out := make([]*Applied, len(as))
	for i, a := range as {
		n := *a
		out[i] = &n
	}
	return out
}

// same reports whether t has had nothing folded into it since it was cloned as o: items are
// only appended and only the last one grows, one event at a time.
func (t *Transcript) same(o *Transcript) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.Len() == o.Len() && t.bytes == o.bytes && t.open.count == o.open.count
}

// sameSlice reports whether two slices are the same slice (Apply assigns these whole and never
// writes into them).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameSubagent reports whether sa (of a live fold) is unchanged since ck was copied from it.
// Pointer fields are compared by identity: Apply replaces what they point to, never changes
// it. TestSameSubagentCoversEveryField keeps this in step with the struct.
func sameSubagent(sa, ck *Subagent) bool {
	return sa.ID == ck.ID && sa.AgentType == ck.AgentType && sa.AgentName == ck.AgentName &&
		sa.PermissionMode == ck.PermissionMode && sameSlice(sa.Tools, ck.Tools) && sa.Task == ck.Task &&
		sa.TimeoutS == ck.TimeoutS && sa.InheritContext == ck.InheritContext && sa.SessionID == ck.SessionID &&
		sa.ParentRef == ck.ParentRef && sa.Parent == ck.Parent && sa.AgentSessionID == ck.AgentSessionID &&
		sa.Status == ck.Status && sa.SpawnedAt == ck.SpawnedAt && sa.ActiveAt == ck.ActiveAt && sa.EndedAt == ck.EndedAt &&
		sa.Stopped == ck.Stopped && sa.StopSeq == ck.StopSeq && sa.Tokens == ck.Tokens && sa.ModelCalls == ck.ModelCalls && sa.CostUSD == ck.CostUSD &&
		sa.StreamedBytes == ck.StreamedBytes && sa.ToolCalls == ck.ToolCalls && sa.CurrentTool == ck.CurrentTool &&
		sa.currentCallID == ck.currentCallID && sa.Outcome == ck.Outcome && sa.Capsule == ck.Capsule &&
		sameSlice(sa.ArtifactPaths, ck.ArtifactPaths) && sa.DurationMS == ck.DurationMS && sa.Retries == ck.Retries &&
		sa.Errors == ck.Errors && sa.LastError == ck.LastError && sa.PolicyDenials == ck.PolicyDenials &&
		sa.PendingRequest == ck.PendingRequest && sa.Isolation == ck.Isolation && sa.Changes == ck.Changes &&
		sa.Discarded == ck.Discarded && sa.Rebased == ck.Rebased && sa.Verify == ck.Verify && sa.Route == ck.Route &&
		len(sa.Switches) == len(ck.Switches) && sa.PlanStep == ck.PlanStep && sa.AgentState == ck.AgentState &&
		sa.index == ck.index && sa.Transcript.same(ck.Transcript) &&
		sa.AgentShadows == ck.AgentShadows && sa.Runner == ck.Runner &&
		sa.RunnerJob == ck.RunnerJob && sa.RunnerSeq == ck.RunnerSeq &&
		sa.RunnerOn == ck.RunnerOn && sa.RunnerRetry == ck.RunnerRetry
}

// samePermission reports whether p is unchanged since ck was copied from it: a request is
// created whole and later changes only by its decision.
func samePermission(p, ck *Permission) bool {
	return p.ID == ck.ID && p.Decision == ck.Decision && p.Scope == ck.Scope && p.DenyReason == ck.DenyReason && p.By == ck.By
}
