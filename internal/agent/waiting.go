package agent

import "time"

// WaitingForServers reports that a conversation's first message waits for
// MCP servers still starting, so that the model is offered their tools;
// the front end says so and may offer to send at once. ServersReady
// follows when the wait is over.
type WaitingForServers struct {
	Servers []PendingServer
}

// PendingServer is a server being waited for and the longest the wait may
// take for it (its startup timeout, within the conversation's bound).
type PendingServer struct {
	Name   string
	Within time.Duration
}

// ServersReady reports that a conversation stopped waiting for servers
// (all settled, the bound reached, or the person chose to send now). It is
// sent once, before the first message goes out, when servers are
// configured.
type ServersReady struct{}

func (WaitingForServers) isEvent() {}
func (ServersReady) isEvent()      {}
