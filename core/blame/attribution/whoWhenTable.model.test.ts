/**
 * The Who&When Hand-Crafted method table (docs/credit.md, "Failure attribution on Who&When"):
 * every model-free method over all 58 logs, and the LLM judges with the tiny shared model over a
 * fixed subset (the first 3 logs: each judge call takes seconds on 2 CPU cores; the CLI runs the
 * full set), their calls recorded and replayed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../cli/main.ts';
import { capture, haveShared, noteSkip, sharedPath, tempDir, tinyModel } from '../../../test/fixtures.ts';

const folder = sharedPath('data', 'who_and_when', 'Hand-Crafted');
const haveData = existsSync(folder);
if (!haveData) noteSkip('attribution', 'the Who&When method table', folder);
if (haveData && !haveShared) noteSkip('attribution', 'the tiny-model judges of the Who&When table', tinyModel);

interface Row { id: string; logs: number; covered: number; agentAccuracy: { overAll: number }; stepAccuracy: { overAll: number }; official: { agentAccuracy: { overAll: number }; stepAccuracy: { overAll: number } }; calls: number }
async function table(...argv: string[]): Promise<{ logs: number; scored: number; unscorable: unknown[]; rows: Row[] }> {
  const io = capture();
  const code = await main(['attribution-eval', '--dataset', 'who-and-when', ...argv, '--json'], io);
  if (code !== 0) throw new Error(`attribution-eval exited ${code}: ${io.err}`);
  return JSON.parse(io.out);
}
/** Row figures as hit counts: [covered, agent, step, official agent, official step]. */
const counts = (r: Row) => [r.covered, r.agentAccuracy.overAll, r.stepAccuracy.overAll, r.official.agentAccuracy.overAll, r.official.stepAccuracy.overAll].map((x, i) => (i === 0 ? x : Math.round(x * r.logs)));

describe.skipIf(!haveData)('Who&When Hand-Crafted: the method table', () => {
  it('all 58 logs scored, none aborting; every model-free method with its coverage, strict and official-style hits; the hybrid clears 58% agent and 15% step', async () => {
    const t = await table('--method', 'all');
    expect(t).toMatchObject({ logs: 58, scored: 58, unscorable: [] });
    const by = Object.fromEntries(t.rows.map((r) => [r.id, counts(r)]));
    expect(by).toEqual({
      'surfaced-infrastructure': [9, 2, 1, 2, 2],
      surfaced: [31, 20, 8, 20, 11],
      structural: [32, 21, 8, 21, 11],
      hybrid: [57, 34, 9, 34, 12],
      'first-worker': [57, 34, 11, 34, 11],
      majority: [57, 33, 10, 33, 11],
    });
    const hybrid = t.rows.find((r) => r.id === 'hybrid')!;
    expect(hybrid.agentAccuracy.overAll).toBeGreaterThanOrEqual(0.58);
    expect(hybrid.stepAccuracy.overAll).toBeGreaterThanOrEqual(0.15);
    const io = capture();
    await main(['attribution-eval', '--dataset', 'who-and-when', '--method', 'all'], io);
    console.log(io.out);
  });

  it('the baselines equal a recount from the raw files (first worker message; always WebSurfer at its first message)', async () => {
    let fwAgent = 0;
    let fwStep = 0;
    let mjAgent = 0;
    let mjStep = 0;
    const files = readdirSync(folder).filter((f) => f.endsWith('.json'));
    for (const f of files) {
      const raw = JSON.parse(readFileSync(path.join(folder, f), 'utf8')) as { history: Array<{ role: string }>; mistake_agent: string; mistake_step: string };
      const roles = raw.history.map((h) => h.role.replace(/\s*\(.*\)$/, ''));
      const fw = roles.findIndex((r) => !['human', 'Orchestrator', 'ComputerTerminal'].includes(r));
      if (fw >= 0 && roles[fw] === raw.mistake_agent) fwAgent++;
      if (fw >= 0 && fw === Number(raw.mistake_step)) fwStep++;
      const ws = roles.indexOf('WebSurfer');
      if (ws >= 0 && raw.mistake_agent === 'WebSurfer') mjAgent++;
      if (ws >= 0 && ws === Number(raw.mistake_step)) mjStep++;
    }
    const t = await table('--method', 'first-worker,majority');
    expect(t.rows.map(counts).map((c) => c.slice(1, 3))).toEqual([[fwAgent, fwStep], [mjAgent, mjStep]]);
  });

  it.skipIf(!haveShared)('the LLM judges (all-at-once, narrowed) with the tiny model on the first 3 logs: real calls, recorded, replayed to the same table', async () => {
    const rec = path.join(tempDir('ww-judge'), 'calls.jsonl');
    const argv = ['--method', 'all-at-once,narrowed-judge', '--limit', '3', '--max-prompt-chars', '1500'];
    const live = await table(...argv, '--model', tinyModel, '--record-calls', rec);
    expect(live.rows.map((r) => [r.id, r.logs, r.calls])).toEqual([['all-at-once', 3, 3], ['narrowed-judge', 3, 3]]);
    const lines = readFileSync(rec, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { method: string; logId: string; system: string; prompt: string; completion: string });
    expect(lines.map((l) => `${l.method}:${l.logId}`)).toEqual(['all-at-once:1', 'all-at-once:2', 'all-at-once:3', 'narrowed-judge:1', 'narrowed-judge:2', 'narrowed-judge:3']);
    for (const l of lines) expect(l.system.length + l.prompt.length).toBeLessThanOrEqual(1500);
    const replayed = await table(...argv, '--replay-calls', rec);
    expect(replayed.rows).toEqual(live.rows.map((r) => ({ ...r, wallSeconds: expect.any(Number) })));
    console.log(`[attribution] tiny-model judges on logs 1-3: ${live.rows.map((r) => `${r.id} covered ${r.covered}/3, agent ${counts(r)[1]}, step ${counts(r)[2]}`).join('; ')} (noise: a 260K-parameter story model)`);
  }, 300_000);
});
