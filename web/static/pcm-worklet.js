// pcm-worklet.js is the AudioWorklet that turns the capture stream into
// what /ws takes: mono, 16 kHz, PCM16 little-endian, in frames of
// FRAME_SAMPLES posted to the page as transferable ArrayBuffers.

const OUT_RATE = 16000; // Hz, the server's only rate
// 100 ms at 16 kHz = 3200 bytes, far under the 64 KiB frame limit: ten
// messages a second (within the 20-250 ms streaming speech services
// advise), where 40 ms frames took 25, each a read and a hand-off on the
// server.
const FRAME_SAMPLES = 1600;

class PCMEncoder extends AudioWorkletProcessor {
  constructor() {
    super();
    // sampleRate is the context's rate, a global of the worklet scope.
    this.ratio = sampleRate / OUT_RATE; // input samples per output sample
    this.phase = 0; // input samples counted toward the next output sample
    this.acc = 0; // sum of those samples (box filter: a cheap anti-alias)
    this.n = 0;
    this.prev = 0; // last input sample, for upsampling
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.fill = 0;
    this.running = true;
    this.port.onmessage = (ev) => {
      if (ev.data === 'stop') {
        this.flush();
        this.running = false;
      }
    };
  }

  process(inputs) {
    const input = inputs[0];
    if (input && input.length > 0) {
      const mono = downmix(input);
      if (this.ratio >= 1) this.decimate(mono);
      else this.interpolate(mono);
    }
    return this.running;
  }

  // decimate averages each window of `ratio` input samples (fractional
  // windows carry over) into one output sample.
  decimate(mono) {
    for (let i = 0; i < mono.length; i++) {
      this.acc += mono[i];
      this.n++;
      this.phase += 1;
      if (this.phase >= this.ratio) {
        this.phase -= this.ratio;
        this.emit(this.acc / this.n);
        this.acc = 0;
        this.n = 0;
      }
    }
  }

  // interpolate upsamples (input rates under 16 kHz) linearly.
  interpolate(mono) {
    for (let i = 0; i < mono.length; i++) {
      const cur = mono[i];
      while (this.phase < 1) {
        this.emit(this.prev + (cur - this.prev) * this.phase);
        this.phase += this.ratio;
      }
      this.phase -= 1;
      this.prev = cur;
    }
  }

  emit(x) {
    const s = x < -1 ? -1 : x > 1 ? 1 : x;
    this.frame[this.fill++] = s < 0 ? s * 0x8000 : s * 0x7fff;
    if (this.fill === FRAME_SAMPLES) this.flush();
  }

  // flush posts the samples gathered so far as one little-endian frame.
  flush() {
    if (this.fill === 0) return;
    const buf = new ArrayBuffer(this.fill * 2);
    const view = new DataView(buf);
    for (let i = 0; i < this.fill; i++) view.setInt16(i * 2, this.frame[i], true);
    this.fill = 0;
    this.port.postMessage(buf, [buf]);
  }
}

function downmix(channels) {
  if (channels.length === 1) return channels[0];
  const out = new Float32Array(channels[0].length);
  for (const ch of channels) {
    for (let i = 0; i < out.length; i++) out[i] += ch[i] / channels.length;
  }
  return out;
}

registerProcessor('pcm-encoder', PCMEncoder);
