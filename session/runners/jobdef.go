package runners

import "github.com/summit-dev/summit/protocols"

// ContextChain is a job's inherited context (Job.Context): what the runner's prompt shows as
// the playbook and the chain of finished subagents, exactly as the session would.
type ContextChain struct {
	Playbook []PlaybookItem `json:"playbook,omitempty"`
	Chain    []ChainLink    `json:"chain,omitempty"`
}

// PlaybookItem and ChainLink are protocols' prompt inputs on the wire.
type PlaybookItem struct {
	ID      string `json:"id"`
	Section string `json:"section,omitempty"`
	Content string `json:"content"`
}

type ChainLink struct {
	SubagentID        string `json:"subagent_id"`
	AgentName         string `json:"agent_name,omitempty"`
	DownstreamContext string `json:"downstream_context,omitempty"`
}

// Prompt is the chain as protocols.BuildPrompt takes it.
func (c *ContextChain) Prompt() ([]protocols.PlaybookItem, []protocols.ChainLink) {
	if c == nil {
		return nil, nil
	}
	var pb []protocols.PlaybookItem
	for _, p := range c.Playbook {
		pb = append(pb, protocols.PlaybookItem{ID: p.ID, Section: p.Section, Content: p.Content})
	}
	var ch []protocols.ChainLink
	for _, l := range c.Chain {
		ch = append(ch, protocols.ChainLink{SubagentID: l.SubagentID, AgentName: l.AgentName, DownstreamContext: l.DownstreamContext})
	}
	return pb, ch
}
