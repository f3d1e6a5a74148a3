/**
 * The lab's MASS jobs take the CLI's defaults: a request naming only the dataset, the model and
 * the loop id maps (host/massJobs.ts) onto exactly the settings `flowlab rank` / `flowlab rsi`
 * store for the same flags, and `startEvolve`'s defaults are `flowlab evolve`'s.
 */
import path from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { massFamily } from '../core/mass/index.ts';
import { EVOLVE_JOB_DEFAULTS, outerSettingsOfRequest } from '../host/massJobs.ts';
import type { CommandContext } from './args.ts';
import { define as defineEvolve } from './commands/evolve.ts';
import { define as defineRank } from './commands/rank.ts';
import { define as defineRsi, rsiOptionsOf, settingsOf, type RsiFlags } from './commands/rsi.ts';

/** The flags commander gives `args` (the command's action replaced: nothing runs). */
async function flagsOf<T>(define: (cmd: Command, ctx: CommandContext) => void, args: string[]): Promise<T> {
  const cmd = new Command('x').exitOverride();
  define(cmd, { io: { stdout: () => {}, stderr: () => {}, isTTY: false } });
  cmd.action(() => {});
  await cmd.parseAsync(args, { from: 'user' });
  return cmd.opts() as T;
}

describe('the lab MASS jobs use the CLI defaults', () => {
  const db = path.resolve('/tmp/lab/f.db');
  const model = '/models/stories260K.gguf';
  for (const [command, define] of [['rank', defineRank], ['rsi', defineRsi]] as const) {
    it(`${command}: the same stored settings and cycles`, async () => {
      const v = await flagsOf<RsiFlags>(define, ['--model', model, '--loop-id', 'x', '--db', db]);
      const o = rsiOptionsOf(v, massFamily(v.dataset), db);
      const lab = outerSettingsOfRequest(command, { dataset: 'learn-tool', model, loopId: 'x' }, db, 'm');
      const { cycles, ...settings } = lab;
      expect(settings).toEqual(settingsOf(command, v, o));
      expect(cycles).toBe(command === 'rsi' ? o.cycles : 1);
    });
  }

  it('evolve: the same defaults', async () => {
    const v = await flagsOf<Record<string, unknown>>(defineEvolve, ['learn-tool', '--model', model]);
    expect(EVOLVE_JOB_DEFAULTS).toEqual({ split: v['split'], limit: v['limit'], offset: v['offset'], iterations: v['iterations'], rule: v['rule'], seed: v['seed'], contextSize: v['contextSize'] });
    expect(v['threads']).toBeUndefined();
  });
});
