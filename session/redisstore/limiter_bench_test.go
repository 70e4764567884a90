package redisstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/poise-dev/poise/session/quota"
	"github.com/poise-dev/poise/tiers/redistest"
	"github.com/rs/zerolog"
)

// benchLimiters are a limiter per counting backend, with limits far above
// what a benchmark uses.
func benchLimiters(b *testing.B) map[string]*quota.Limiter {
	limits := quota.Limits{QuestionsPerMinute: 1 << 30, AudioSecondsPerHour: 1 << 30, DailyTokensPerVendor: 1 << 40}
	mk := func(c quota.Counters) *quota.Limiter {
		return quota.NewLimiter(limits, c, time.Now, zerolog.Nop())
	}
	shared := quota.NewFallbackCounters(NewCounters(redistest.Client(b, redistest.DBStore), CountersConfig{}), 0, nil, zerolog.Nop())
	return map[string]*quota.Limiter{"memory": mk(quota.NewMemoryCounters()), "redis": mk(shared)}
}

// BenchmarkLimiterQuestion: one questions_per_minute check, as a session
// makes per question (on Redis: one script call).
func BenchmarkLimiterQuestion(b *testing.B) {
	for name, l := range benchLimiters(b) {
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if !l.TakeQuestion("bench-" + strconv.Itoa(i%64)).OK {
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
				if !l.TakeAudio("bench", 640).OK {
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
				settle, v := l.ReserveTokens(b.Context(), "bench", "vendor-a", 600)
				if !v.OK {
					b.Fatal("refused")
				}
				settle(200)
			}
		})
	}
}
