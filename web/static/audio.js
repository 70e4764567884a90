// audio.js captures the interviewer's voice — a shared tab's audio
// (getDisplayMedia) or the microphone (getUserMedia) — and hands 16 kHz
// PCM16 frames to a callback through the pcm-encoder AudioWorklet.

const WORKLET_URL = '/static/pcm-worklet.js';

// AudioError carries a reason the page shows in its status line.
export class AudioError extends Error {
  constructor(reason) {
    super(reason);
    this.reason = reason; // 'denied' | 'no-tab-audio' | 'unsupported'
  }
}

// Capture is one running capture. stop() ends the tracks, the worklet and
// the audio context; onEnded fires once when the source ends on its own
// (the candidate pressed the browser's "Stop sharing").
export class Capture {
  constructor(source, stream, ctx, node, sink) {
    this.source = source; // 'tab' | 'mic'
    this.stream = stream;
    this.ctx = ctx;
    this.node = node;
    this.sink = sink;
    this.stopped = false;
    this.onEnded = null;
    // video is the shared tab's video track (tab capture only), kept so
    // that "Capture question" can grab its current frame (shot.js).
    this.video = stream.getVideoTracks()[0] || null;
  }

  stop() {
    if (this.stopped) return;
    this.stopped = true;
    try {
      this.node.port.postMessage('stop');
      this.node.disconnect();
      this.sink.disconnect();
    } catch {
      // already disconnected
    }
    for (const tr of this.stream.getTracks()) tr.stop();
    this.ctx.close().catch(() => {});
  }
}

// startCapture asks the browser for the source and starts encoding; each
// frame (an ArrayBuffer of PCM16 LE at 16 kHz) goes to onFrame. It rejects
// with an AudioError when the candidate declines or the browser cannot.
export async function startCapture(source, onFrame) {
  const md = navigator.mediaDevices;
  if (!md || typeof AudioWorkletNode === 'undefined') throw new AudioError('unsupported');
  let stream;
  try {
    stream = source === 'tab' ? await openTab(md) : await openMic(md);
  } catch (e) {
    if (e instanceof AudioError) throw e;
    throw new AudioError('denied');
  }
  const ctx = new AudioContext();
  try {
    await ctx.audioWorklet.addModule(WORKLET_URL);
    const input = ctx.createMediaStreamSource(stream);
    const node = new AudioWorkletNode(ctx, 'pcm-encoder', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
    // A muted sink keeps the graph pulling without playing the audio back.
    const sink = ctx.createGain();
    sink.gain.value = 0;
    input.connect(node).connect(sink).connect(ctx.destination);
    node.port.onmessage = (ev) => onFrame(ev.data);
    if (ctx.state === 'suspended') await ctx.resume();
    const cap = new Capture(source, stream, ctx, node, sink);
    for (const tr of stream.getAudioTracks()) {
      tr.addEventListener('ended', () => {
        if (!cap.stopped && cap.onEnded) cap.onEnded();
      });
    }
    return cap;
  } catch (e) {
    for (const tr of stream.getTracks()) tr.stop();
    ctx.close().catch(() => {});
    throw new AudioError('unsupported');
  }
}

async function openTab(md) {
  if (!md.getDisplayMedia) throw new AudioError('unsupported');
  // Chromium shares tab audio only alongside video; the video track is
  // kept, at a low frame rate, for "Capture question".
  const stream = await md.getDisplayMedia({
    video: { frameRate: { max: 2 } },
    audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  if (stream.getAudioTracks().length === 0) {
    for (const tr of stream.getTracks()) tr.stop();
    throw new AudioError('no-tab-audio');
  }
  return stream;
}

async function openMic(md) {
  if (!md.getUserMedia) throw new AudioError('unsupported');
  // Echo cancellation would remove the interviewer coming out of the
  // speakers, which is exactly what the candidate wants captioned.
  return md.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: true, autoGainControl: true },
    video: false,
  });
}
