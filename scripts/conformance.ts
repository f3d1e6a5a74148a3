/**
 * `npm run conformance [-- --limit N] [--example text] [--dataset text] [--all-k] [--sample]`:
 * every example workflow × dataset against the oracle and the messy test models
 * (test/oracle/conformance.ts), on the full first split of each dataset unless `--limit`;
 * prints the table (Markdown) and exits 1 when the oracle misses a task or fails a node, or the
 * messy model scores a run wrong without a flagged failure (silent) or with an unblamed one.
 */
import { parseArgs } from 'node:util';
import { PyodideSandbox } from '../models/sandbox/index.ts';
import { formatConformance, runConformance, type ConformanceRow } from '../test/oracle/conformance.ts';

const { values } = parseArgs({ options: { limit: { type: 'string' }, example: { type: 'string' }, dataset: { type: 'string' }, 'all-k': { type: 'boolean' }, 'no-code': { type: 'boolean' } } });
const sandbox = values['no-code'] ? undefined : new PyodideSandbox();
const started = Date.now();
const skipped: string[] = [];
try {
  const rows = await runConformance({
    ...(values.limit !== undefined && { limit: Number(values.limit) }),
    allK: values['all-k'] === true,
    only: { ...(values.example && { example: values.example }), ...(values.dataset && { dataset: values.dataset }) },
    ...(sandbox && { sandbox }),
    onSkip: (e, d, why) => skipped.push(`${e} × ${d}: ${why}`),
    onRow: (r) => process.stderr.write(`${r.style.padEnd(6)} ${r.example} × ${r.dataset}: ${(r.accuracy * 100).toFixed(0)}% of ${r.runs}\n`),
  });
  process.stdout.write(formatConformance(rows));
  const bad = problems(rows);
  process.stderr.write(`pairs not run:\n  ${skipped.join('\n  ')}\n`);
  process.stdout.write(`\n${rows.length / 2} example × dataset pairs (${skipped.length} not run: the tasks lack a field the workflow reads, or a right answer does not fit its contracts), ${rows.reduce((s, r) => s + r.runs, 0)} runs, ${((Date.now() - started) / 1000).toFixed(0)} s; ${bad.length ? `${bad.length} problem(s):\n${bad.join('\n')}` : 'no problem'}\n`);
  process.exitCode = bad.length ? 1 : 0;
} finally {
  await sandbox?.close();
}

function problems(rows: readonly ConformanceRow[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const failed = Object.values(r.failures).reduce((s, v) => s + v, 0);
    if (r.style === 'oracle' && (r.accuracy < 1 || failed)) out.push(`oracle ${r.example} × ${r.dataset}: ${(r.accuracy * 100).toFixed(1)}%, ${failed} failed node(s), ${r.unknownCalls} call(s) without a task`);
    if (r.style === 'messy' && (r.silent || r.unblamed)) out.push(`messy ${r.example} × ${r.dataset}: ${r.silent} silent, ${r.unblamed} unblamed`);
  }
  return out;
}
