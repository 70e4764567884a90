package session

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"
)

// frameSocket is a socket that receives one frame every gap: a Read blocks
// until a frame has arrived, then returns every byte arrived by then (up
// to len(b)), as a kernel socket does. It records when each Read returned.
// For synctest bubbles.
type frameSocket struct {
	net.Conn // only Read is used
	start    time.Time
	frame    []byte
	gap      time.Duration
	frames   int
	sent     int // bytes handed out
	reads    []time.Duration
}

func (s *frameSocket) Read(b []byte) (int, error) {
	total := s.frames * len(s.frame)
	if s.sent == total {
		return 0, io.EOF
	}
	nextFrame := s.sent/len(s.frame) + 1 // the frame whose last byte the next read needs at least
	if arrives := s.start.Add(time.Duration(nextFrame-1) * s.gap); time.Now().Before(arrives) {
		time.Sleep(time.Until(arrives))
	}
	arrived := min(total, (int(time.Since(s.start)/s.gap)+1)*len(s.frame))
	n := min(len(b), arrived-s.sent)
	for i := range n {
		b[i] = s.frame[(s.sent+i)%len(s.frame)]
	}
	s.sent += n
	s.reads = append(s.reads, time.Since(s.start))
	return n, nil
}

// TestPacedReadsWhileAudioStreams: while audio streams, the socket is read
// at most once per audioReadPace after a read that emptied it, and the
// frames that came meanwhile are read at once, none lost; with audio off,
// every frame is read as it comes.
func TestPacedReadsWhileAudioStreams(t *testing.T) {
	const frames = 50 // 2 s of 40 ms frames
	frame := bytes.Repeat([]byte{1, 2, 3, 4}, 1286/4+1)[:1286]
	for _, audio := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			sock := &frameSocket{start: time.Now(), frame: frame, gap: 40 * time.Millisecond, frames: frames}
			p := &pacedReads{Conn: sock}
			p.audio(audio)
			r := bufio.NewReaderSize(p, upgradedReadBuffer)
			got := make([]byte, len(frame))
			for i := range frames {
				if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, frame) {
					t.Fatalf("audio %v: frame %d: %v, bytes intact %v", audio, i, err, bytes.Equal(got, frame))
				}
			}
			wakes := 1
			for i := 1; i < len(sock.reads); i++ {
				gap := sock.reads[i] - sock.reads[i-1]
				if gap > 0 {
					wakes++
				}
				if audio && gap > 0 && gap < audioReadPace {
					t.Errorf("reads %d and %d %v apart, want at least %v while audio streams", i-1, i, gap, audioReadPace)
				}
			}
			switch {
			case audio && wakes > frames*40/100+2:
				t.Errorf("audio on: %d wake-ups for %d frames over %v, want one per %v", wakes, frames, frames*sock.gap, audioReadPace)
			case !audio && wakes != frames:
				t.Errorf("audio off: %d wake-ups for %d frames, want one per frame", wakes, frames)
			}
		})
	}
}
