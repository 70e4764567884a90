package asr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Audio format of the whole package: what browsers send and whisper.cpp
// expects.
const (
	SampleRate    = 16000 // samples per second, mono
	bytesPerFrame = 2     // one PCM16 sample
	wavHeaderLen  = 44    // RIFF + fmt + data headers of a plain PCM file
	wavFormatPCM  = 1
	wavFormatExt  = 0xFFFE // WAVE_FORMAT_EXTENSIBLE, accepted when its subformat is PCM
)

// ErrWAV is wrapped by every DecodeWAV error.
var ErrWAV = errors.New("asr: not a 16-bit mono PCM WAV")

// EncodeWAV returns pcm as a RIFF WAV file: PCM16, mono, sampleRate Hz.
func EncodeWAV(pcm []int16, sampleRate int) []byte {
	dataLen := len(pcm) * bytesPerFrame
	b := make([]byte, wavHeaderLen+dataLen)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(wavHeaderLen-8+dataLen))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16) // fmt chunk size
	binary.LittleEndian.PutUint16(b[20:], wavFormatPCM)
	binary.LittleEndian.PutUint16(b[22:], 1) // channels
	binary.LittleEndian.PutUint32(b[24:], uint32(sampleRate))
	binary.LittleEndian.PutUint32(b[28:], uint32(sampleRate*bytesPerFrame))
	binary.LittleEndian.PutUint16(b[32:], bytesPerFrame) // block align
	binary.LittleEndian.PutUint16(b[34:], 16)            // bits per sample
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(dataLen))
	out := b[wavHeaderLen:]
	for i, s := range pcm {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(s))
	}
	return b
}

// DecodeWAV reads a RIFF WAV file holding 16-bit mono PCM (plain or
// WAVE_FORMAT_EXTENSIBLE) and returns its samples and sample rate. Chunks
// other than fmt and data are skipped. A data chunk longer than the file
// (as streaming writers leave it) is read to the end of the file.
func DecodeWAV(b []byte) (pcm []int16, sampleRate int, err error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, 0, fmt.Errorf("%w: no RIFF/WAVE header", ErrWAV)
	}
	haveFmt := false
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int(binary.LittleEndian.Uint32(b[off+4:]))
		body := b[off+8:]
		if size > len(body) {
			if id != "data" {
				return nil, 0, fmt.Errorf("%w: chunk %q overruns the file", ErrWAV, id)
			}
			size = len(body)
		}
		body = body[:size]
		switch id {
		case "fmt ":
			if sampleRate, err = parseFmt(body); err != nil {
				return nil, 0, err
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, 0, fmt.Errorf("%w: data before fmt", ErrWAV)
			}
			return decodePCM16(body[:len(body)&^1]), sampleRate, nil
		}
		off += 8 + size + size&1 // chunks are padded to even sizes
	}
	return nil, 0, fmt.Errorf("%w: no data chunk", ErrWAV)
}

func parseFmt(body []byte) (sampleRate int, err error) {
	if len(body) < 16 {
		return 0, fmt.Errorf("%w: short fmt chunk", ErrWAV)
	}
	format := binary.LittleEndian.Uint16(body[0:])
	channels := binary.LittleEndian.Uint16(body[2:])
	rate := binary.LittleEndian.Uint32(body[4:])
	bits := binary.LittleEndian.Uint16(body[14:])
	if format == wavFormatExt && len(body) >= 26 {
		format = binary.LittleEndian.Uint16(body[24:]) // first two bytes of the subformat GUID
	}
	if format != wavFormatPCM || channels != 1 || bits != 16 || rate == 0 {
		return 0, fmt.Errorf("%w: format %d, %d channels, %d bits, %d Hz", ErrWAV, format, channels, bits, rate)
	}
	return int(rate), nil
}

// decodePCM16 converts little-endian PCM16 bytes (even length) to samples.
func decodePCM16(b []byte) []int16 {
	pcm := make([]int16, len(b)/bytesPerFrame)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return pcm
}
