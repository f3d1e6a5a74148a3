#!/usr/bin/env node
/**
 * Draws Flowlab's app icon and writes it in the three formats Forge hands to the platforms
 * (forge.config.ts `packagerConfig.icon: 'build/icons/icon'`, the extension chosen per OS):
 *   build/icons/icon.png   512x512 RGBA PNG (Linux window icon, .deb)
 *   build/icons/icon.ico   ICO holding 256x256 PNG (Windows exe and Squirrel installer; PNG
 *                          entries are valid since Windows Vista)
 *   build/icons/icon.icns  ICNS with `ic08` (256x256 PNG) and `ic09` (512x512 PNG) (macOS)
 * The picture: three nodes of a workflow joined by two edges on a rounded dark square, drawn
 * per pixel with 4x4 supersampling. PNG (RFC 2083) and the ICO/ICNS containers are written by
 * hand with node:zlib: no image library. Run: node scripts/make-icons.mjs (output committed).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'build/icons');

/** Colour (RGBA 0-255) of the point (x, y) in the unit square. */
function paint(x, y) {
  const r = 0.2; // corner radius of the background
  const dx = Math.max(Math.abs(x - 0.5) - (0.5 - r), 0);
  const dy = Math.max(Math.abs(y - 0.5) - (0.5 - r), 0);
  if (Math.hypot(dx, dy) > r) return [0, 0, 0, 0];
  const nodes = [[0.28, 0.3], [0.72, 0.5], [0.3, 0.72]];
  const seg = (ax, ay, bx, by) => {
    const t = Math.max(0, Math.min(1, ((x - ax) * (bx - ax) + (y - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)));
    return Math.hypot(x - (ax + t * (bx - ax)), y - (ay + t * (by - ay)));
  };
  for (const [nx, ny] of nodes) if (Math.hypot(x - nx, y - ny) < 0.1) return [126, 231, 135, 255];
  if (seg(...nodes[0], ...nodes[1]) < 0.025 || seg(...nodes[2], ...nodes[1]) < 0.025) return [220, 230, 240, 255];
  return [22, 44, 78, 255];
}

/** RGBA pixels of a size x size icon, 4x4 samples per pixel. */
function render(size) {
  const px = Buffer.alloc(size * size * 4);
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < size; i++) {
      const acc = [0, 0, 0, 0];
      for (let s = 0; s < 16; s++) {
        const c = paint((i + ((s % 4) + 0.5) / 4) / size, (j + (Math.floor(s / 4) + 0.5) / 4) / size);
        for (let k = 0; k < 3; k++) acc[k] += c[k] * c[3];
        acc[3] += c[3];
      }
      const o = (j * size + i) * 4;
      for (let k = 0; k < 3; k++) px[o + k] = acc[3] ? Math.round(acc[k] / acc[3]) : 0;
      px[o + 3] = Math.round(acc[3] / 16);
    }
  }
  return px;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
/** A PNG file: 8-bit RGBA, no interlace, filter 0 on every row. */
function png(size) {
  const px = render(size);
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let j = 0; j < size; j++) px.copy(raw, j * (size * 4 + 1) + 1, j * size * 4, (j + 1) * size * 4);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

const png512 = png(512);
const png256 = png(256);
// ICO: ICONDIR (reserved 0, type 1, count 1), one ICONDIRENTRY (0 = 256 px), then the PNG.
const ico = Buffer.alloc(22);
ico.writeUInt16LE(0, 0);
ico.writeUInt16LE(1, 2);
ico.writeUInt16LE(1, 4);
ico.set([0, 0, 0, 0], 6);
ico.writeUInt16LE(1, 10);
ico.writeUInt16LE(32, 12);
ico.writeUInt32LE(png256.length, 14);
ico.writeUInt32LE(22, 18);
// ICNS: 'icns' + total length, then (type, length incl. 8-byte header, data) entries.
const entry = (type, data) => {
  const h = Buffer.alloc(8);
  h.write(type, 0, 'ascii');
  h.writeUInt32BE(data.length + 8, 4);
  return Buffer.concat([h, data]);
};
const entries = Buffer.concat([entry('ic08', png256), entry('ic09', png512)]);
const icnsHead = Buffer.alloc(8);
icnsHead.write('icns', 0, 'ascii');
icnsHead.writeUInt32BE(entries.length + 8, 4);

mkdirSync(outDir, { recursive: true });
writeFileSync(path.join(outDir, 'icon.png'), png512);
writeFileSync(path.join(outDir, 'icon.ico'), Buffer.concat([ico, png256]));
writeFileSync(path.join(outDir, 'icon.icns'), Buffer.concat([icnsHead, entries]));
console.log(`icons written to ${path.relative(root, outDir)}/ (png ${png512.length} B, ico ${png256.length + 22} B, icns ${entries.length + 8} B)`);
