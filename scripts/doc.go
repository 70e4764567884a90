// Package scripts holds the repository's test entry points that are not
// about one package: scripts/test (the whole suite) and the import test,
// which checks the arrows between packages that docs/architecture.md
// allows; and scripts/profile-stages, which splits a CPU profile of poise
// by stage (docs/benchmarks.md). It has no code of its own besides the
// tests.
package scripts
