// Package health is the health center: it probes backends, counts their
// failures in live traffic, keeps circuits and level states in a store
// shared by the nodes, and signals sessions when a level goes down or
// recovers. It knows backends and levels, not the engine or the gateway.
package health
