// Package tiers is the answer engine: it answers a question from the best
// healthy source — hedged vendors (L1), the local model (L2), template
// recall (L3) — falling through within one question under the SLA budget
// and the token budget, and tells each answer through its events. It
// declares the health view it needs (Health); tiers/health provides it.
package tiers
