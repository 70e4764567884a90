package session

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the session-side Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	levelUsers  *prometheus.GaugeVec
	transitions *prometheus.CounterVec
	userErrors  prometheus.Counter
	storeDrops  prometheus.Counter
	storeFails  prometheus.Counter
	slowClients prometheus.Counter
	sessions    prometheus.Gauge
	limitHits   *prometheus.CounterVec
}

// NewMetrics registers the session metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	m := &Metrics{
		levelUsers: f.NewGaugeVec(prometheus.GaugeOpts{Name: "poise_fallback_level_active_users",
			Help: "Live sessions at each answer level."}, []string{"level"}),
		transitions: f.NewCounterVec(prometheus.CounterOpts{Name: "poise_fallback_transition_total",
			Help: "Level transitions of sessions."}, []string{"from", "to", "reason"}),
		userErrors: f.NewCounter(prometheus.CounterOpts{Name: "poise_e2e_user_visible_errors_total",
			Help: "Questions that ended with nothing shown to the candidate, and sessions that crashed. Must stay 0."}),
		storeDrops: f.NewCounter(prometheus.CounterOpts{Name: "poise_store_writes_dropped_total",
			Help: "Ops store writes dropped because the store was too slow."}),
		storeFails: f.NewCounter(prometheus.CounterOpts{Name: "poise_store_write_errors_total",
			Help: "Ops store writes that failed."}),
		slowClients: f.NewCounter(prometheus.CounterOpts{Name: "poise_ws_slow_clients_total",
			Help: "Connections closed because their outbound queue stayed full."}),
		sessions: f.NewGauge(prometheus.GaugeOpts{Name: "poise_sessions_active",
			Help: "Live sessions on this node, connected or waiting for resume."}),
		limitHits: f.NewCounterVec(prometheus.CounterOpts{Name: "poise_limit_hits_total",
			Help: "Times a per-subject limit changed what a candidate got: a question answered without models " +
				"(questions_per_minute) or from a lower level (daily_tokens_per_vendor), a refused hello " +
				"(sessions_per_subject), captions paused (audio_seconds_per_hour, once per session and hour)."},
			[]string{"limit"}),
	}
	for _, l := range []string{limitQuestions, limitAudio, limitTokens, limitSessions} {
		m.limitHits.WithLabelValues(l) // every limit shows, at 0 until hit
	}
	return m
}

func (m *Metrics) limitHit(limit string) {
	if m != nil {
		m.limitHits.WithLabelValues(limit).Inc()
	}
}

func (m *Metrics) levelEnter(level string) {
	if m != nil {
		m.levelUsers.WithLabelValues(level).Inc()
	}
}

func (m *Metrics) levelLeave(level string) {
	if m != nil {
		m.levelUsers.WithLabelValues(level).Dec()
	}
}

func (m *Metrics) transition(from, to, reason string) {
	if m != nil {
		m.transitions.WithLabelValues(from, to, reason).Inc()
	}
}

func (m *Metrics) userVisibleError() {
	if m != nil {
		m.userErrors.Inc()
	}
}

func (m *Metrics) storeDropped() {
	if m != nil {
		m.storeDrops.Inc()
	}
}

func (m *Metrics) storeFailed() {
	if m != nil {
		m.storeFails.Inc()
	}
}

func (m *Metrics) slowClient() {
	if m != nil {
		m.slowClients.Inc()
	}
}

func (m *Metrics) sessionStarted() {
	if m != nil {
		m.sessions.Inc()
	}
}

func (m *Metrics) sessionEnded() {
	if m != nil {
		m.sessions.Dec()
	}
}
