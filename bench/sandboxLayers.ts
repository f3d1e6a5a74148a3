/**
 * What each isolation layer of the code sandbox stops on its own: the escape corpus
 * (models/sandbox/escapes.fixture.ts) run against pools with every layer on, with exactly one
 * layer on, and with none, each attempt alone against a fresh sentinel file and a listening
 * port. An attempt ESCAPED when it printed `ESCAPED`, changed the sentinel folder, or connected
 * to the port. Resource attempts (memory, time, output) are stopped by the pool's limits, which
 * are not layers, so they hold in every column.
 * Run: `npx tsx bench/sandboxLayers.ts` (several minutes: each pool starts cold). Prints a table.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESCAPES } from '../models/sandbox/escapes.fixture.ts';
import { ALL_LAYERS, PyodideSandbox, type SandboxLayers } from '../models/sandbox/index.ts';

const NAMES = Object.keys(ALL_LAYERS) as (keyof SandboxLayers)[];
const none = Object.fromEntries(NAMES.map((n) => [n, false])) as unknown as SandboxLayers;
const configs: [string, SandboxLayers][] = [
  ['all', ALL_LAYERS],
  ...NAMES.map((n) => [`only ${n}`, { ...none, [n]: true }] as [string, SandboxLayers]),
  ['none', none],
];

const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-layers-'));
const file = path.join(dir, 'sentinel.txt');
const SENTINEL = 'sentinel\n';
let connections = 0;
const server = net.createServer((s) => { connections++; s.destroy(); });
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as net.AddressInfo).port;
const fill = (code: string) => code.replaceAll('{{FILE}}', file).replaceAll('{{DIR}}', dir).replaceAll('{{PORT}}', String(port));

const table = new Map<string, string[]>(ESCAPES.map((a) => [a.id, []]));
for (const [label, layers] of configs) {
  const sb = new PyodideSandbox({ size: 1, timeoutMs: 2_500, memoryMb: 256, layers });
  for (const a of ESCAPES) {
    writeFileSync(file, SENTINEL);
    const before = connections;
    const r = await sb.run({ code: fill(a.code) });
    const touched = readFileSync(file, 'utf8') !== SENTINEL || readdirSync(dir).length !== 1;
    const escaped = r.stdout.includes('ESCAPED') || touched || connections > before;
    for (const extra of readdirSync(dir)) if (extra !== 'sentinel.txt') rmSync(path.join(dir, extra), { recursive: true, force: true });
    table.get(a.id)!.push(escaped ? 'ESCAPED' : r.status);
  }
  await sb.close();
  console.error(`${label}: done`);
}
server.close();
rmSync(dir, { recursive: true, force: true });

const width = 14;
console.log(`${'attempt'.padEnd(26)}${configs.map(([l]) => l.replace('only ', '').padEnd(width)).join('')}`);
console.log(`${''.padEnd(26)}${configs.map(([l]) => (l.startsWith('only') ? '(only)' : '').padEnd(width)).join('')}`);
for (const a of ESCAPES) console.log(`${a.id.padEnd(26)}${table.get(a.id)!.map((c) => c.padEnd(width)).join('')}`);
const escapes = configs.map((_, i) => ESCAPES.filter((a) => table.get(a.id)![i] === 'ESCAPED').length);
console.log(`${'escaped'.padEnd(26)}${escapes.map((n) => `${n}/${ESCAPES.length}`.padEnd(width)).join('')}`);
