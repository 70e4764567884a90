// shot.js turns a screenshot into a question: an image pasted or dropped
// on the page, or the current frame of the shared tab ("Capture
// question"), cropped by a box the candidate drags, encoded within the
// protocol's caps (docs/protocol.md, "Screenshot questions") and sent as
// `image` parts.

export const MAX_BYTES = 320 * 1024; // encoded image
export const MAX_PIXELS = 4 * 1024 * 1024; // width × height
export const MAX_SIDE = 4096; // pixels, either side
const PART_BYTES = 45000; // raw bytes per `image` part (60,000 base64 characters)
const MIN_BOX = 12; // px on screen: a smaller drag is a click, not a crop

// grabFrame draws the current frame of a video track to a canvas.
export async function grabFrame(track) {
  const video = document.createElement('video');
  video.muted = true;
  video.playsInline = true;
  video.srcObject = new MediaStream([track]);
  try {
    await video.play();
    if (!video.videoWidth) await new Promise((ok) => video.addEventListener('loadeddata', ok, { once: true }));
    const c = document.createElement('canvas');
    c.width = video.videoWidth;
    c.height = video.videoHeight;
    c.getContext('2d').drawImage(video, 0, 0);
    return c;
  } finally {
    video.pause();
    video.srcObject = null;
  }
}

// captureOnce asks for a screen or tab to share, grabs one frame and
// stops sharing: "Capture question" when no tab is shared yet.
export async function captureOnce() {
  const stream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
  try {
    return await grabFrame(stream.getVideoTracks()[0]);
  } finally {
    for (const tr of stream.getTracks()) tr.stop();
  }
}

// fileToCanvas decodes a pasted or dropped image file.
export async function fileToCanvas(file) {
  const bmp = await createImageBitmap(file);
  const c = document.createElement('canvas');
  c.width = bmp.width;
  c.height = bmp.height;
  c.getContext('2d').drawImage(bmp, 0, 0);
  bmp.close();
  return c;
}

// encode returns {format, bytes} for canvas (optionally cropped to box,
// in canvas pixels) within MAX_BYTES, MAX_PIXELS and MAX_SIDE: PNG when
// it fits (text stays sharp), else JPEG at falling quality, else a
// smaller scale.
export async function encode(canvas, box) {
  const b = box || { x: 0, y: 0, w: canvas.width, h: canvas.height };
  let scale = Math.min(1, MAX_SIDE / b.w, MAX_SIDE / b.h, Math.sqrt(MAX_PIXELS / (b.w * b.h)));
  for (let round = 0; round < 8; round++) {
    const c = document.createElement('canvas');
    c.width = Math.max(1, Math.floor(b.w * scale));
    c.height = Math.max(1, Math.floor(b.h * scale));
    c.getContext('2d').drawImage(canvas, b.x, b.y, b.w, b.h, 0, 0, c.width, c.height);
    for (const [type, q] of [['image/png'], ['image/jpeg', 0.92], ['image/jpeg', 0.8], ['image/jpeg', 0.65]]) {
      const blob = await new Promise((ok) => c.toBlob(ok, type, q));
      if (blob && blob.size <= MAX_BYTES) {
        return { format: type === 'image/png' ? 'png' : 'jpeg', bytes: new Uint8Array(await blob.arrayBuffer()) };
      }
    }
    scale *= 0.75;
  }
  throw new Error('image too large');
}

// imageParts splits bytes into the `image` messages of one screenshot.
export function imageParts(id, format, bytes) {
  const parts = Math.ceil(bytes.length / PART_BYTES);
  const out = [];
  for (let i = 0; i < parts; i++) {
    const chunk = bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES);
    let bin = '';
    for (let j = 0; j < chunk.length; j += 0x8000) bin += String.fromCharCode(...chunk.subarray(j, j + 0x8000));
    out.push({ type: 'image', id, format, part: i, parts, data: btoa(bin) });
  }
  return out;
}

// Cropper shows a canvas in the page's screenshot dialog and lets the
// candidate drag a box over it; onSend(canvas, box|null) when they send.
export class Cropper {
  constructor(doc, onSend) {
    this.doc = doc;
    this.dialog = doc.getElementById('shot');
    this.stage = doc.getElementById('shot-stage');
    this.boxEl = doc.getElementById('shot-box');
    this.onSend = onSend;
    this.canvas = null;
    this.box = null; // in canvas pixels
    this.drag = null;
    this.stage.addEventListener('pointerdown', (e) => this.down(e));
    this.stage.addEventListener('pointermove', (e) => this.move(e));
    this.stage.addEventListener('pointerup', (e) => this.up(e));
    doc.getElementById('shot-send').addEventListener('click', () => this.send());
    doc.getElementById('shot-cancel').addEventListener('click', () => this.close());
  }

  open(canvas) {
    this.canvas = canvas;
    this.box = null;
    this.boxEl.hidden = true;
    canvas.id = 'shot-canvas';
    this.stage.querySelector('canvas')?.remove();
    this.stage.prepend(canvas);
    this.dialog.hidden = false;
    this.doc.body.dataset.shot = 'open';
    this.doc.getElementById('shot-send').focus();
  }

  close() {
    this.dialog.hidden = true;
    this.doc.body.dataset.shot = '';
    this.stage.querySelector('canvas')?.remove();
    this.canvas = null;
  }

  send() {
    const c = this.canvas;
    const box = this.box;
    this.close();
    if (c) this.onSend(c, box);
  }

  // point maps a pointer event to canvas pixels.
  point(e) {
    const r = this.canvas.getBoundingClientRect();
    const sx = this.canvas.width / r.width;
    const sy = this.canvas.height / r.height;
    return {
      x: Math.min(this.canvas.width, Math.max(0, (e.clientX - r.left) * sx)),
      y: Math.min(this.canvas.height, Math.max(0, (e.clientY - r.top) * sy)),
      sx,
    };
  }

  down(e) {
    if (!this.canvas) return;
    this.stage.setPointerCapture?.(e.pointerId);
    this.drag = this.point(e);
  }

  move(e) {
    if (!this.drag) return;
    const p = this.point(e);
    const box = { x: Math.min(p.x, this.drag.x), y: Math.min(p.y, this.drag.y), w: Math.abs(p.x - this.drag.x), h: Math.abs(p.y - this.drag.y) };
    this.show(box);
  }

  up(e) {
    if (!this.drag) return;
    const p = this.point(e);
    const box = { x: Math.min(p.x, this.drag.x), y: Math.min(p.y, this.drag.y), w: Math.abs(p.x - this.drag.x), h: Math.abs(p.y - this.drag.y) };
    const small = box.w / p.sx < MIN_BOX || box.h / p.sx < MIN_BOX;
    this.drag = null;
    this.box = small ? null : { x: Math.round(box.x), y: Math.round(box.y), w: Math.round(box.w), h: Math.round(box.h) };
    this.show(this.box);
  }

  // show draws box (canvas pixels) over the canvas, or hides it.
  show(box) {
    if (!box) {
      this.boxEl.hidden = true;
      this.doc.body.dataset.shotBox = '';
      return;
    }
    const r = this.canvas.getBoundingClientRect();
    const s = this.stage.getBoundingClientRect();
    const k = r.width / this.canvas.width;
    Object.assign(this.boxEl.style, {
      left: `${r.left - s.left + box.x * k}px`,
      top: `${r.top - s.top + box.y * k}px`,
      width: `${box.w * k}px`,
      height: `${box.h * k}px`,
    });
    this.boxEl.hidden = false;
    this.doc.body.dataset.shotBox = `${Math.round(box.w)}x${Math.round(box.h)}`;
  }
}
