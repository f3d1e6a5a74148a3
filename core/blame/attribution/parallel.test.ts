/**
 * attribution-eval's judge with logs in flight (issue 26; evaluate.ts `judgeInFlight`): a
 * SIMULATED judge whose replies come after a delay that depends on the call (so later logs finish
 * first) gives the same records, in the same order, and hands on the same calls in the same order
 * (what `--record-calls` writes) at parallel 1 and 4, with several calls in flight at 4.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../cli/main.ts';
import { capture, tempDir } from '../../../test/fixtures.ts';
import { importWhoAndWhen } from './whoAndWhen.ts';
import { judgeCallRecord } from './judge.ts';
import { ScriptedProvider, type GenerateRequest, type ModelProvider } from '../../model/index.ts';
import { evaluateAttribution } from './evaluate.ts';
import type { JudgeCall, LlmJudgeMethod } from './judge.ts';
import type { LogStep, WhoAndWhenLog } from './types.ts';

const AGENTS = ['Planner', 'Coder', 'Checker'];

/** Log `k`: 4 + k % 5 steps after the human's, labelled at its second agent step. */
function log(k: number): WhoAndWhenLog {
  const steps: LogStep[] = Array.from({ length: 5 + (k % 5) }, (_, index) => {
    const agent = index === 0 ? 'human' : AGENTS[(index + k) % 3]!;
    return { index, agent, rawAgent: agent, content: index === 0 ? `Task ${k}: add the list.` : `Message ${index} of log ${k} from ${agent}.` };
  });
  return { id: `log-${k}`, file: `/tmp/log-${k}.json`, variant: 'hand-crafted', question: `Task ${k}`, groundTruth: '42', isCorrect: false, steps, agents: ['human', ...AGENTS], label: { agent: steps[2]!.agent, rawAgent: steps[2]!.agent, step: 2, reason: '' } };
}

/** SIMULATED judge: answers from the prompt's hash, after (hash % 15) ms; counts calls in flight. */
function judge() {
  const flight = { now: 0, max: 0 };
  const hash = (s: string) => [...s].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0, 0x811c9dc5);
  const inner = new ScriptedProvider((r: GenerateRequest) => {
    const h = hash(`${r.seed}|${r.prompt}`);
    const props = (r.jsonSchema as { properties?: Record<string, { enum?: unknown[] }> } | undefined)?.properties ?? {};
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(props)) out[k] = v.enum ? v.enum[h % v.enum.length] : 1;
    return JSON.stringify(out);
  });
  const provider: ModelProvider = {
    name: inner.name,
    modelsLoaded: () => 0,
    dispose: async () => {},
    async generate(r) {
      flight.max = Math.max(flight.max, ++flight.now);
      try {
        await new Promise((res) => setTimeout(res, hash(`${r.seed}|${r.prompt}`) % 15));
        return await inner.generate(r);
      } finally {
        flight.now--;
      }
    },
  };
  return { provider, flight };
}

describe('attribution judge, logs in flight (SIMULATED judge)', () => {
  const logs = Array.from({ length: 10 }, (_, k) => log(k));
  for (const method of ['all-at-once', 'step-by-step', 'binary-search'] as LlmJudgeMethod[]) {
    it(`${method}: the same records and recorded calls at parallel 1 and 4`, { timeout: 60_000 }, async () => {
      const at = async (parallel: number) => {
        const { provider, flight } = judge();
        const calls: JudgeCall[] = [];
        const progress: string[] = [];
        const ev = await evaluateAttribution(logs, method, {
          parallel,
          judge: { provider, model: 'default', role: 'judge', seed: 3, onCall: (c) => void calls.push(c) },
          onRecord: (r, done, total) => void progress.push(`${done}/${total} ${r.logId}`),
        });
        const untimed = calls.map(({ ms: _ms, startedAt: _s, ...c }) => c);
        return { flight, ev, calls: untimed, progress };
      };
      const one = await at(1);
      const four = await at(4);
      expect(one.flight.max).toBe(1);
      expect(four.flight.max).toBeGreaterThan(1);
      expect(one.ev.records).toHaveLength(10);
      expect(four.ev.records).toEqual(one.ev.records);
      expect(four.ev.score).toEqual(one.ev.score);
      expect(four.calls).toEqual(one.calls);
      expect(one.calls.map((c) => c.logId)).toEqual([...one.calls.map((c) => c.logId)].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4))));
      expect(four.progress).toEqual(logs.map((l, i) => `${i + 1}/10 ${l.id}`));
    });
  }

  it('flowlab attribution-eval --replay-calls at --parallel 1 and 4 prints the same JSON', { timeout: 60_000 }, async () => {
    const dir = tempDir('attr-parallel');
    const folder = path.join(dir, 'logs');
    mkdirSync(folder);
    for (let k = 0; k < 6; k++) {
      const l = log(k);
      writeFileSync(path.join(folder, `${k + 1}.json`), JSON.stringify({
        question: l.question, ground_truth: '42', is_corrected: false, mistake_reason: 'r', question_ID: `q${k}`,
        history: l.steps.map((s) => ({ role: s.agent, content: s.content })), mistake_agent: l.label.agent, mistake_step: '2',
      }));
    }
    // A recording of the SIMULATED judge on these logs, as --record-calls writes it.
    const imported = importWhoAndWhen(folder);
    const recorded: string[] = [];
    await evaluateAttribution(imported, 'binary-search', { judge: { provider: judge().provider, model: 'default', role: 'judge', onCall: (c) => void recorded.push(JSON.stringify(judgeCallRecord(c, imported.findIndex((l) => l.id === c.logId)))) } });
    const file = path.join(dir, 'calls.jsonl');
    writeFileSync(file, recorded.join('\n') + '\n');
    const at = async (parallel: string) => {
      const io = capture();
      const code = await main(['attribution-eval', '--dataset', 'who-and-when', '--method', 'binary-search', '--path', folder, '--replay-calls', file, '--parallel', parallel, '--json'], io);
      expect(code, io.err).toBe(0);
      return JSON.parse(io.out) as Record<string, unknown>;
    };
    const strip = (j: Record<string, unknown>) => JSON.stringify(j, (k, v: unknown) => (k === 'wallSeconds' ? undefined : v));
    const one = await at('1');
    const four = await at('4');
    expect(strip(four)).toBe(strip(one));
    // Every log judged from the recording (a prediction for each), per-agent confusion included.
    expect(one).toMatchObject({ logs: 6, covered: 6, method: 'binary-search' });
    expect((one['perAgent'] as unknown[]).length).toBe(3);
  });
});
