/**
 * Numbers in flags are decimal integers in range, and `--threads` is bounded by the machine.
 * `FLAG_PROBES` is a table of (argv, exit status, what stderr must say), run through the CLI's
 * `main` in this process; none of them reaches a model.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { capture, scratchDir, writeGsm8kTasks } from '../fixtures.ts';

const dir = scratchDir('flags');
const RUN = ['run', 'examples/gsm8k-single.yaml', '--dataset', 'gsm8k', '--model', '/nonexistent/m.gguf'];
const cores = Math.max(1, availableParallelism());

/** (argv after `run ... --model`, exit status, stderr must contain). */
export const FLAG_PROBES: ReadonlyArray<[string[], number, string]> = [
  [['--limit', '-1'], 2, '--limit must be an integer >= 1, got "-1"'],
  [['--limit=-1'], 2, '--limit must be an integer >= 1, got "-1"'],
  [['--limit', '0x2'], 2, '--limit must be an integer >= 1 in decimal digits, got "0x2"'],
  [['--limit', '1e1'], 2, '--limit must be an integer >= 1 in decimal digits, got "1e1"'],
  [['--limit', ' 2'], 2, '--limit must be an integer >= 1 in decimal digits, got " 2"'],
  [['--limit', '2.0'], 2, '--limit must be an integer >= 1 in decimal digits, got "2.0"'],
  [['--limit', '10001'], 2, '--limit must be at most 10000, got 10001'],
  [['--seed', '1e300'], 2, '--seed must be an integer >= 0 in decimal digits, got "1e300"'],
  [['--seed', '0x10'], 2, '--seed must be an integer >= 0 in decimal digits, got "0x10"'],
  [['--seed', '99999999999999999999'], 2, '--seed must be at most 9007199254740991, got 99999999999999999999'],
  [['--offset', '-1'], 2, '--offset must be an integer >= 0, got "-1"'],
  [['--threads', '0'], 2, '--threads must be an integer >= 1, got "0"'],
  [['--threads', '257'], 2, '--threads must be at most 256, got 257'],
  [['--threads', '100000'], 2, '--threads must be at most 256, got 100000'],
  [['--context-size', '200000'], 2, '--context-size must be at most 131072, got 200000'],
];

describe('integer flags', () => {
  for (const [argv, status, message] of FLAG_PROBES) {
    it(`run ${argv.join(' ')}: exit ${status}, "${message}"`, async () => {
      const io = capture();
      expect(await main([...RUN, '--db', `${dir()}/f.db`, ...argv], io)).toBe(status);
      expect(io.err).toContain(message);
    });
  }

  it('--threads above the cores (but within 256) is lowered to them with a note', async () => {
    const io = capture();
    const asked = Math.min(256, cores + 7);
    writeGsm8kTasks(`${dir()}/data`);
    expect(await main([...RUN, '--db', `${dir()}/f.db`, '--data-dir', `${dir()}/data`, '--threads', String(asked)], io)).toBe(1); // the model is missing
    expect(io.err).toContain(`Note: --threads ${asked} is more than this machine's ${cores} CPU core${cores === 1 ? '' : 's'}: using ${cores}.`);
    expect(io.err).toContain('MODEL_NOT_FOUND');
  });
});
