// Package tiers answers questions from the best healthy source: hedged
// vendors (L1), the local model (L2) and template recall (L3), with error
// classification, per-question fallthrough under a deadline, and the health
// center that decides which levels sessions may use.
package tiers
