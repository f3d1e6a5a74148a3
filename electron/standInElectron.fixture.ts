/**
 * A stand-in Electron release archive for packaging tests: `electron-v<version>-linux-x64.zip`
 * laid out as Electron publishes it for Linux (the `electron` executable, `version`, `LICENSE`,
 * `resources/`), where the executable is a tiny shell script that carries a fuse wire (the
 * sentinel @electron/fuses looks for, then version 1, the wire's length and one ASCII byte per
 * fuse: '0' off, '1' on). @electron/packager copies it, renames it and packs the app beside it
 * for real; only the Electron binary is fake. Written as a stored (uncompressed) zip by hand
 * (PKWARE APPNOTE 6.3.x: local headers, central directory, end record; CRC-32 from node:zlib).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';

/** @electron/fuses' sentinel (its `SENTINEL` constant), followed in the binary by the fuse wire. */
export const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';

/** One zip entry: a path (folders end in `/`), its bytes and Unix mode. */
interface Entry {
  name: string;
  data: Buffer;
  mode: number;
}

/** A stored zip of `entries` (no compression; Unix modes in the external attributes). */
export function zipStored(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const crc = crc32(e.data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt32LE(0, 10); // time, date
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, e.data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(e.data.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(0, 30); // extra, comment lengths
    central.writeUInt32LE(0, 34); // disk, internal attributes
    central.writeUInt32LE(((e.mode & 0xffff) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + e.data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/**
 * Writes `electron-v<version>-linux-x64.zip` into `dir` with a fuse wire of `wire` ('0'/'1' per
 * fuse, index 0 first) and returns its path.
 */
export function writeStandInElectronZip(dir: string, version: string, wire: string): string {
  const exe = Buffer.concat([
    Buffer.from('#!/bin/sh\necho "stand-in Electron: no real binary in this archive" >&2\nexit 1\n', 'utf8'),
    Buffer.from(FUSE_SENTINEL, 'ascii'),
    Buffer.from([1, wire.length]),
    Buffer.from(wire, 'ascii'),
    Buffer.from('\n', 'ascii'),
  ]);
  const file = path.join(dir, `electron-v${version}-linux-x64.zip`);
  writeFileSync(
    file,
    zipStored([
      { name: 'electron', data: exe, mode: 0o100755 },
      { name: 'version', data: Buffer.from(version, 'ascii'), mode: 0o100644 },
      { name: 'LICENSE', data: Buffer.from('Stand-in archive for tests; Electron is MIT-licensed.\n', 'utf8'), mode: 0o100644 },
      { name: 'resources/', data: Buffer.alloc(0), mode: 0o040755 },
      { name: 'resources/default_app.asar', data: Buffer.alloc(0), mode: 0o100644 },
    ]),
  );
  return file;
}
