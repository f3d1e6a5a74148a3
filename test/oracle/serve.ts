/**
 * Serves the oracle or the messy test model (SIMULATED; test/oracle/server.ts) on loopback for
 * the tasks of the named datasets, so any command can use it as an endpoint model:
 *
 *   npx tsx test/oracle/serve.ts --style oracle --dataset learn-design:heldout --dataset learn-errand --port 8181
 *   npm run flowlab -- run examples/learn-design-fixed.yaml --dataset learn-design --split heldout \
 *     --limit 5 --model 'openai:http://127.0.0.1:8181/v1#oracle'
 *
 * `--dataset <name>[:<split>]` (repeatable; DataWright names keep their colons, the split after
 * the last `:` only when it is one of the dataset's splits; default: every split). The workflows'
 * skills (for designs) are read from `examples/`. Prints the endpoint reference, serves until killed.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { getDataset, type Task } from '../../core/tasks/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { parseWorkflow } from '../../core/workflow/index.ts';
import type { Schema } from './book.ts';
import { exampleFiles } from './conformance.ts';
import { serveTestModel } from './server.ts';

const { values } = parseArgs({ options: { style: { type: 'string', default: 'oracle' }, dataset: { type: 'string', multiple: true, default: [] }, port: { type: 'string', default: '0' } } });
if (values.style !== 'oracle' && values.style !== 'messy') throw new Error(`--style must be oracle or messy, got ${values.style}`);
const tasks: Task[] = [];
for (const spec of values.dataset) {
  const cut = spec.lastIndexOf(':');
  const whole = (() => { try { return getDataset(spec); } catch { return undefined; } })();
  const dataset = whole ?? getDataset(spec.slice(0, cut));
  const splits = whole ? dataset.splits : [spec.slice(cut + 1)];
  for (const split of splits) tasks.push(...dataset.load({ split }));
}
const skills = new Map<string, unknown[]>();
for (const file of exampleFiles()) {
  for (const [name, s] of parseWorkflow(readFileSync(file, 'utf8'), { tools: defaultTools() }).graph.skills) {
    const e = (s.contract?.schema as Schema | undefined)?.enum;
    if (e) skills.set(name, e);
  }
}
const server = await serveTestModel({ style: values.style, tasks, skills, port: Number(values.port) });
process.stdout.write(`${values.style} (SIMULATED) answering ${tasks.length} tasks: ${server.ref}\n`);
