package tiers

import "github.com/poise-dev/poise/tiers/upstream"

// Health is the health view the engine needs: which levels and backends
// are down, and where to report what each request met. tiers/health's
// Center is the production Health. Every method returns at once: reports
// are queued for the health goroutine, the queries read memory.
type Health interface {
	// Down reports whether level l is marked down.
	Down(l Level) bool
	// BackendUp reports whether the backend is up (unknown names are).
	BackendUp(name string) bool
	// ReportSuccess records a live request to backend that ended well.
	ReportSuccess(backend string)
	// ReportResult records the end of one live request to backend at l.
	ReportResult(l Level, backend string, c upstream.Class)
}
