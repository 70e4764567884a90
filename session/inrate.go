package session

import (
	"time"
)

// Inbound rates per connection (docs/protocol.md, "Input limits"). Each is
// a token bucket: the rate is sustained, the burst is what a client may
// send at once after being quiet. A frame over its bucket is dropped and
// the client gets a too_fast error, at most one every warnEvery. A client
// whose dropped excess reaches abuseFactor times a rate, in each of
// abuseStrikes consecutive seconds, is closed with 1008.
const (
	pcmBytesPerSecond = audioSampleRate * 2 // pcm_s16le mono: 32,000 bytes of audio a second

	textBytesRate     = 128 << 10              // text frame bytes a second
	textBytesBurst    = 512 << 10              // text frame bytes at once
	pingRate          = 50                     // pings a second (the page sends one every 10 s)
	pingBurst         = 1000                   // pings at once
	messageRate       = 10                     // other text messages a second, refused ones included
	messageBurst      = 50                     // other text messages at once
	audioRate         = 4 * pcmBytesPerSecond  // audio bytes a second: 4× real time
	audioBurst        = 15 * pcmBytesPerSecond // audio bytes at once: 15 s ahead of real time (a stall caught up)
	minAudioCharge    = pcmBytesPerSecond / 50 // bytes a binary frame counts at least (20 ms), so tiny frames cannot flood
	warnEvery         = time.Second            // at most one too_fast error per connection this often
	abuseFactor       = 10                     // dropped excess in one second, in multiples of the rate, that is a strike
	abuseStrikes      = 5                      // consecutive strike seconds that close the connection
	abuseCloseMessage = "too many messages"    // close reason with 1008
)

// inRate is a connection's inbound rate limit. Owned by the connection's
// reader (handshake, then readLoop); not safe for concurrent use.
type inRate struct {
	now    func() time.Time
	start  time.Time // windows of abuse accounting are whole seconds since start
	warned time.Time // when the last too_fast was due; zero: never

	textBytes, pings, messages, audio bucket
}

// inVerdict says what becomes of one frame.
type inVerdict struct {
	drop  bool           // over the rate: the frame is dropped
	warn  *protocolError // too_fast to send the client, or nil (one a second at most)
	close bool           // sustained abuse: close the connection with 1008
}

// The buckets' kinds: what each admits, shared by every connection.
var (
	textBytesKind = &bucketKind{what: "text frames", unit: "bytes", rate: textBytesRate, burst: textBytesBurst}
	pingsKind     = &bucketKind{what: "pings", unit: "messages", rate: pingRate, burst: pingBurst}
	messagesKind  = &bucketKind{what: "text messages", unit: "messages", rate: messageRate, burst: messageBurst}
	audioKind     = &bucketKind{what: "audio", unit: "bytes", rate: audioRate, burst: audioBurst}
)

func newInRate(now func() time.Time) *inRate {
	return &inRate{now: now, start: now(),
		textBytes: newBucket(textBytesKind), pings: newBucket(pingsKind),
		messages: newBucket(messagesKind), audio: newBucket(audioKind),
	}
}

// binary admits a binary (audio) frame of n bytes.
func (r *inRate) binary(n int) inVerdict { return r.admit(&r.audio, max(n, minAudioCharge)) }

// text admits a text frame of n bytes, before it is decoded.
func (r *inRate) text(n int) inVerdict { return r.admit(&r.textBytes, n) }

// message admits one decoded (or refused) text message: pings and every
// other message have their own rates.
func (r *inRate) message(ping bool) inVerdict {
	if ping {
		return r.admit(&r.pings, 1)
	}
	return r.admit(&r.messages, 1)
}

func (r *inRate) admit(b *bucket, n int) inVerdict {
	now := r.now()
	at := now.Sub(r.start)
	if b.take(at, float64(n)) {
		return inVerdict{}
	}
	v := inVerdict{drop: true, close: b.drop(int64(at/time.Second), float64(n))}
	if r.warned.IsZero() || now.Sub(r.warned) >= warnEvery {
		r.warned = now
		v.warn = b.kind.refusal()
	}
	return v
}

// bucketKind is what a bucket admits: its rates and the words of its
// too_fast message.
type bucketKind struct {
	what, unit  string
	rate, burst float64 // units a second; units
}

// refusal is the kind's too_fast message.
func (k *bucketKind) refusal() *protocolError {
	return refuse(codeTooFast, "%s over %.0f %s a second (bursts up to %.0f); the excess was dropped", k.what, k.rate, k.unit, k.burst)
}

// bucket is a token bucket with abuse accounting; times are since its
// inRate's start.
type bucket struct {
	kind   *bucketKind
	tokens float64
	last   time.Duration // of the last refill

	window    int64   // the second that dropped counts
	dropped   float64 // units dropped in window
	strikeWin int64   // the latest second whose drops reached abuseFactor × rate
	strikes   int     // consecutive strike seconds up to strikeWin
}

func newBucket(k *bucketKind) bucket { return bucket{kind: k, tokens: k.burst, strikeWin: -2} }

// take refills the bucket up to at and takes n units if it holds them.
func (b *bucket) take(at time.Duration, n float64) bool {
	if at > b.last {
		b.tokens = min(b.kind.burst, b.tokens+(at-b.last).Seconds()*b.kind.rate)
		b.last = at
	}
	if n > b.tokens {
		return false
	}
	b.tokens -= n
	return true
}

// drop counts n dropped units in second win and reports whether the
// client has now been abusive for abuseStrikes consecutive seconds.
func (b *bucket) drop(win int64, n float64) bool {
	if win != b.window {
		b.window, b.dropped = win, 0
	}
	limit := abuseFactor * b.kind.rate
	before := b.dropped
	b.dropped += n
	if before < limit && b.dropped >= limit { // this second just became a strike
		if b.strikeWin == win-1 {
			b.strikes++
		} else {
			b.strikes = 1
		}
		b.strikeWin = win
	}
	return b.strikeWin == win && b.strikes >= abuseStrikes
}
