import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { capture } from '../test/fixtures.ts';
import { harden, intOption, parseIntInRange, parseRolePair, parseWith, rolePairOption, UsageError } from './args.ts';
import { main } from './main.ts';

describe('the shared value parsers', () => {
  it('integers in range: the value, or the flag named with the bound', () => {
    expect(parseIntInRange('12', 'limit', 1)).toBe(12);
    expect(parseIntInRange('0', 'offset')).toBe(0);
    expect(() => parseIntInRange('ten', 'limit', 1)).toThrow('--limit must be an integer >= 1, got "ten"');
    expect(() => parseIntInRange('1.5', 'limit', 1)).toThrow(InvalidArgumentError);
    expect(() => parseIntInRange('', 'seed')).toThrow('--seed must be an integer >= 0, got ""');
    expect(() => parseIntInRange('70000', 'port', 0, 65535)).toThrow('--port must be at most 65535, got 70000');
  });

  it('role=value pairs: split at the first =, appended in flag order; once refuses a role twice', () => {
    const spec = { flag: 'role-version', shape: 'role=<version-id>', once: true };
    const one = parseRolePair('solver=wv=1', undefined, spec);
    expect(one).toEqual([['solver', 'wv=1']]);
    expect(parseRolePair('planner=wv-2', one, spec)).toEqual([['solver', 'wv=1'], ['planner', 'wv-2']]);
    expect(() => parseRolePair('solver=wv-3', one, spec)).toThrow('--role-version gives role "solver" twice');
    for (const bad of ['solver', '=x', 'solver=']) expect(() => parseRolePair(bad, undefined, spec)).toThrow(`--role-version takes role=<version-id>, got "${bad}"`);
    expect(parseRolePair('solver=a', [['solver', 'b']], { flag: 'role-model' })).toEqual([['solver', 'b'], ['solver', 'a']]);
  });
});

describe('commander, hardened', () => {
  const cmd = () => harden(new Command('t'), capture())
    .argument('<file>')
    .addOption(intOption('--limit <n>', 'tasks', { min: 1, default: 10 }))
    .addOption(rolePairOption('--role-model <role=file>', 'per role'))
    .addOption(new Option('--optimizer <mode>', 'choices').choices(['edit', 'free']));

  it('parses defaults, integers and repeated pairs', () => {
    const c = parseWith(cmd(), ['w.yaml', '--role-model', 'a=x.gguf', '--role-model', 'b=y.gguf']);
    expect(c.args).toEqual(['w.yaml']);
    expect(c.opts()).toEqual({ limit: 10, roleModel: [['a', 'x.gguf'], ['b', 'y.gguf']] });
    expect(parseWith(cmd(), ['--limit', '3', 'w.yaml']).opts().limit).toBe(3);
  });

  it('every parse error is a UsageError worded as flowlab words it, carrying the usage', () => {
    const cases: Array<[string[], string]> = [
      [['w.yaml', '--bogus'], "Unknown option '--bogus'"],
      [[], 'missing <file>'],
      [['a', 'b'], 'expected <file>, got 2 arguments'],
      [['w.yaml', '--limit', '0'], '--limit must be an integer >= 1, got "0"'],
      [['w.yaml', '--limit'], "option '--limit <n>' argument missing"],
      [['w.yaml', '--role-model', 'a'], '--role-model takes role=value, got "a"'],
      // commander's choices() error names neither the flag nor the value once its prefix is cut: both put back.
      [['w.yaml', '--optimizer', 'bogus'], '--optimizer must be one of edit, free, got "bogus"'],
    ];
    for (const [argv, message] of cases) {
      let err: unknown;
      try {
        parseWith(cmd(), argv);
      } catch (e) {
        err = e;
      }
      expect(err, argv.join(' ')).toBeInstanceOf(UsageError);
      expect((err as UsageError).message).toBe(message);
      expect((err as UsageError).usage).toMatch(/^Usage: t \[options\] <file>\n/);
    }
  });
});

describe('flowlab main', () => {
  it('--help and -h print the command usage and exit 0; help goes to stdout only', async () => {
    for (const flag of ['--help', '-h']) {
      const io = capture();
      expect(await main(['replay', flag], io)).toBe(0);
      expect(io.out).toMatch(/^Usage: flowlab replay <experiment-id> \[--db file\] \[--json\]\n/);
      expect(io.out).toContain('--db <file>');
      expect(io.err).toBe('');
    }
    let io = capture();
    expect(await main(['cards', 'list', '--help'], io)).toBe(0);
    expect(io.out).toMatch(/^Usage: flowlab cards list \[options\]\n/);
    expect(io.out).toContain('--role <role>');
    io = capture();
    expect(await main(['help'], io)).toBe(0);
    expect(io.out).toMatch(/^Usage: flowlab <command> \[options\]/);
  });

  it('a missing required option names it; a bad argument prints the usage once, on stderr', async () => {
    const io = capture();
    expect(await main(['export', 'exp-1'], io)).toBe(2);
    expect(io.err).toMatch(/^flowlab export: missing --out <dir>\n\nUsage: flowlab export <experiment-id> --out <dir> \[options\]\n/);
    expect(io.err.match(/Usage:/g)).toHaveLength(1);
    expect(io.out).toBe('');
  });

  it('a command group without its subcommand prints its usage once and names the subcommands (it printed the help twice)', async () => {
    for (const group of ['job', 'datasets', 'models']) {
      const io = capture();
      expect(await main([group], io)).toBe(2);
      expect(io.err.match(/Usage:/g), group).toHaveLength(1);
      expect(io.err).toContain(`Usage: flowlab ${group} [options] [command]`);
      expect(io.err).toMatch(new RegExp(`flowlab ${group}: missing <command>: one of [a-z-]+(, [a-z-]+)+\n`));
      expect(io.err).not.toContain('(outputHelp)');
    }
  });

  it("a subcommand's parse error prints that subcommand's usage, not its parent's", async () => {
    const cases: Array<[string[], RegExp, string]> = [
      [['job', 'resume'], /^Usage: flowlab job resume \[options\] <kind> <id>\n/, 'missing <kind>'],
      [['job', 'start', 'run'], /^Usage: flowlab job start \[options\] <kind>\n/, 'missing --spec <json>'],
      [['cards', 'list', '--bogus'], /^Usage: flowlab cards list \[options\]\n/, "Unknown option '--bogus'"],
      // Refused by the job table after parsing (an unknown kind): still the subcommand's usage.
      [['job', 'resume', 'bogus', 'x', '--db', ':memory:'], /^Usage: flowlab job resume \[options\] <kind> <id>\n/, 'kind: unknown job kind "bogus" (kinds: run, blame-eval, rollouts, train-loop, evolve, rank, rsi, study, download, fork)'],
      [['job', 'start', 'bogus', '--spec', '{}', '--db', ':memory:'], /^Usage: flowlab job start \[options\] <kind>\n/, 'kind: unknown job kind "bogus" (kinds: run, blame-eval, rollouts, train-loop, evolve, rank, rsi, study, download, fork)'],
    ];
    for (const [argv, usage, message] of cases) {
      const io = capture();
      expect(await main(argv, io), argv.join(' ')).toBe(2);
      const [first, rest] = [io.err.split('\n\n')[0], io.err.slice(io.err.indexOf('\n\n') + 2)];
      expect(first).toBe(`flowlab ${argv[0]}: ${message}`);
      expect(rest, argv.join(' ')).toMatch(usage);
    }
  });

  it('the start-up path of the built bundle loads no command module', () => {
    const meta = path.resolve(import.meta.dirname, '../out/cli/meta.json');
    if (!existsSync(meta)) return; // built by `npm test` before vitest runs
    const { outputs } = JSON.parse(readFileSync(meta, 'utf8')) as { outputs: Record<string, { imports: Array<{ path: string; kind: string }>; inputs: Record<string, unknown> }> };
    const seen = new Set<string>();
    const walk = (p: string) => {
      if (seen.has(p) || !outputs[p]) return;
      seen.add(p);
      for (const i of outputs[p].imports) if (i.kind === 'import-statement') walk(i.path);
    };
    walk('out/cli/main.js');
    const inputs = [...seen].flatMap((p) => Object.keys(outputs[p]!.inputs));
    expect(inputs).toContain('cli/main.ts');
    expect(inputs.filter((f) => /^(cli\/commands|core\/workflow|core\/experiments|models)\//.test(f))).toEqual([]);
  });
});
