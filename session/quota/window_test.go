package quota

import (
	"testing"
	"time"
)

func TestWindowStart(t *testing.T) {
	t.Parallel()
	midMinute := time.Date(2026, 11, 29, 10, 20, 30, 0, time.UTC) // 30 s into a minute, an hour and a UTC day
	cases := []struct {
		at   time.Time
		w    time.Duration
		want time.Time
	}{
		{midMinute, time.Minute, time.Date(2026, 11, 29, 10, 20, 0, 0, time.UTC)},
		{midMinute, time.Hour, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)},
		{midMinute, 24 * time.Hour, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{midMinute.In(time.FixedZone("UTC+8", 8*3600)), 24 * time.Hour, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{time.UnixMilli(-1), time.Minute, time.UnixMilli(-60000)},
	}
	for _, tc := range cases {
		if got := windowStart(tc.at, tc.w); !got.Equal(tc.want) {
			t.Errorf("windowStart(%v, %v) = %v, want %v", tc.at, tc.w, got.UTC(), tc.want)
		}
	}
}
