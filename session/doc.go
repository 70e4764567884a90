// Package session runs live interview-copilot sessions: one goroutine per
// session owns its answer level (a looplab/fsm), its replay buffer and its
// questions; the Hub accepts WebSocket connections and creates, resumes and
// ends sessions; the ops Store records levels and transitions.
package session
