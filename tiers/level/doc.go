// Package level names the answer levels L1–L4 and the health signals (FSM
// events) that move a session between them, in one place for the engine,
// the health center and the session.
package level
