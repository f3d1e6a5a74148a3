import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptedProvider, type GenerateRequest } from '../../model/index.ts';
import { resolveSharedDir } from '../../tasks/paths.ts';
import { evaluateAttribution } from './evaluate.ts';
import { surfaceFailure } from './surfaced.ts';
import { importWhoAndWhen } from './whoAndWhen.ts';
import { main } from '../../../cli/main.ts';
import { capture } from '../../../test/fixtures.ts';

const folder = path.join(resolveSharedDir(), 'data', 'who_and_when', 'Hand-Crafted');
const have = existsSync(folder);
if (!have) console.log(`[attribution] skipping the real Who&When tests: ${folder} is absent (set FLOWLAB_SHARED)`);

describe.skipIf(!have)('Who&When Hand-Crafted (real data)', () => {
  it('imports all 58 logs with the label counts the data README states', () => {
    const logs = importWhoAndWhen(folder);
    expect(logs).toHaveLength(58);
    expect(logs.every((l) => l.variant === 'hand-crafted')).toBe(true);
    const counts: Record<string, number> = {};
    for (const l of logs) counts[l.label.agent] = (counts[l.label.agent] ?? 0) + 1;
    expect(counts).toEqual({ WebSurfer: 33, Orchestrator: 18, Assistant: 4, FileSurfer: 3 });
    // every labelled agent is a speaker of its log after normalisation
    for (const l of logs) expect(l.agents).toContain(l.label.agent);
    expect(new Set(logs.flatMap((l) => l.agents))).toEqual(new Set(['human', 'Orchestrator', 'WebSurfer', 'Assistant', 'FileSurfer', 'ComputerTerminal']));
  });

  it.each(['infrastructure', 'execution'] as const)('surfaced method (harness crash = %s): covered and accuracies equal a straightforward recount from the raw labels', async (harnessCrash) => {
    const logs = importWhoAndWhen(folder);
    const { score } = await evaluateAttribution(logs, 'surfaced', { surfaced: { harnessCrash } });

    // Independent recount: read the raw files, walk each history, take the first execution failure
    // that does not directly follow another failed message, compare with the raw labels.
    let covered = 0;
    let agentHits = 0;
    let stepHits = 0;
    const files = readdirSync(folder).filter((f) => f.endsWith('.json'));
    for (const f of files) {
      const raw = JSON.parse(readFileSync(path.join(folder, f), 'utf8')) as { history: Array<{ role: string; content: string }>; mistake_agent: string; mistake_step: string };
      const quoted: string[] = [];
      let previousFailed = false;
      let predicted: { agent: string; step: number } | null = null;
      raw.history.forEach((h, i) => {
        const agent = h.role.replace(/\s*\(.*\)$/, '');
        const failure = surfaceFailure({ index: i, agent, content: h.content }, { quoted, harnessCrash });
        if (agent === 'human') quoted.push(h.content.trim());
        if (!predicted && failure?.failureClass === 'execution' && !previousFailed) predicted = { agent, step: i };
        previousFailed = failure !== null;
      });
      if (!predicted) continue;
      const p = predicted as { agent: string; step: number };
      covered++;
      if (p.agent === raw.mistake_agent) agentHits++;
      if (p.step === Number(raw.mistake_step)) stepHits++;
    }
    expect(score.logs).toBe(files.length);
    expect(score.covered).toBe(covered);
    expect(score.agentAccuracy.overAll).toBeCloseTo(agentHits / files.length, 12);
    expect(score.stepAccuracy.overAll).toBeCloseTo(stepHits / files.length, 12);
    expect(score.agentAccuracy.overCovered).toBeCloseTo(agentHits / covered, 12);
    expect(score.stepAccuracy.overCovered).toBeCloseTo(stepHits / covered, 12);
    console.log(`[attribution] surfaced (harness crash = ${harnessCrash}) on Hand-Crafted: ${covered}/${files.length} covered, agent ${agentHits}, step ${stepHits} correct`);
  });

  it('a judge end-to-end on 2 real logs with a scripted (simulated) provider: prompts within budget, JSON answers parsed', async () => {
    const logs = importWhoAndWhen(folder, { limit: 2 });
    const maxPromptChars = 3000;
    const requests: GenerateRequest[] = [];
    // The script answers with the last agent and the last step the schema allows.
    const provider = new ScriptedProvider((r) => {
      requests.push(r);
      const props = (r.jsonSchema as { properties: { agent: { enum: string[] }; step: { enum: number[] } } }).properties;
      return JSON.stringify({ agent: props.agent.enum.at(-1), step: props.step.enum.at(-1) });
    });
    const { records, score } = await evaluateAttribution(logs, 'all-at-once', { judge: { provider, maxChars: 200, maxPromptChars } });
    expect(requests).toHaveLength(2);
    for (const [i, r] of requests.entries()) {
      expect((r.system ?? '').length + r.prompt.length).toBeLessThanOrEqual(maxPromptChars);
      expect(r.prompt).toContain('to fit the context budget');
      expect(r.key).toEqual({ taskKey: logs[i]!.id, nodeId: 'judge', attempt: 1, callIndex: 0 });
      const last = logs[i]!.steps.length - 1;
      expect(records[i]!.prediction).toEqual({ agent: logs[i]!.steps[last]!.agent, step: last });
    }
    expect(score.covered).toBe(2);
  });
});

describe.skipIf(!have)('flowlab attribution-eval on the shared logs', () => {
  it('surfaced on the default folder (the shared Hand-Crafted logs)', async () => {
    const io = capture();
    expect(await main(['attribution-eval', '--dataset', 'who-and-when', '--method', 'surfaced', '--json'], io)).toBe(0);
    const j = JSON.parse(io.out);
    expect(j.logs).toBe(58);
    expect(j.path).toBe(folder);
  });
});
