package session

import (
	"strconv"
	"testing"
	"time"

	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/rs/zerolog"
)

// benchLimiters are a limiter per counting backend, with limits far above
// what a benchmark uses.
func benchLimiters(b *testing.B) map[string]*limiter {
	limits := Limits{QuestionsPerMinute: 1 << 30, AudioSecondsPerHour: 1 << 30, DailyTokensPerVendor: 1 << 40}
	mk := func(c Counters) *limiter {
		return newLimiter(Config{Limits: limits, Counters: c, Log: zerolog.Nop(), Now: time.Now})
	}
	shared := NewFallbackCounters(NewRedisCounters(redistest.Client(b, redistest.DBSession), RedisCountersConfig{}), 0, nil, zerolog.Nop())
	return map[string]*limiter{"memory": mk(NewMemoryCounters()), "redis": mk(shared)}
}

// BenchmarkLimiterQuestion: one questions_per_minute check, as a session
// makes per question (on Redis: one script call).
func BenchmarkLimiterQuestion(b *testing.B) {
	for name, l := range benchLimiters(b) {
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if !l.takeQuestion("bench-" + strconv.Itoa(i%64)).ok {
					b.Fatal("refused")
				}
			}
		})
	}
}

// BenchmarkLimiterAudioFrame: one 20 ms frame (640 bytes) counted against
// audio_seconds_per_hour; Counters are asked once per second of audio.
func BenchmarkLimiterAudioFrame(b *testing.B) {
	for name, l := range benchLimiters(b) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if !l.takeAudio("bench", 640).ok {
					b.Fatal("refused")
				}
			}
		})
	}
}

// BenchmarkLimiterTokens: one reservation and its settlement, as each
// model attempt makes with daily_tokens_per_vendor (on Redis: two calls).
func BenchmarkLimiterTokens(b *testing.B) {
	for name, l := range benchLimiters(b) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				settle, v := l.reserveTokens(b.Context(), "bench", "vendor-a", 600)
				if !v.ok {
					b.Fatal("refused")
				}
				settle(200)
			}
		})
	}
}
