import type { Command } from 'commander';
import { ENDPOINT_PREFIX, EndpointRefError, endpointId, parseEndpointRef, type EndpointSpec } from '../../core/model/index.ts';
import { probeEndpoint, probesFile, verdictLines, writeVerdicts, type ProbeVerdicts } from '../../models/openai/index.ts';
import { act, UsageError, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';

interface ProbeFlags {
  json?: boolean;
  store: boolean;
}

/** `flowlab probe <endpoint>`: what a server really does, per feature (models/openai/probe.ts), printed and stored. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<endpoint> [--json] [--no-store]')
    .description([
      'Checks what an OpenAI-compatible server really does and prints a verdict per feature: is a JSON',
      'schema enforced or ignored, does the same seed give the same text, do usage counts match the text.',
      'The verdicts are stored ($FLOWLAB_PROBES, else ~/.flowlab/probes.json); the provider reads them',
      '(where a schema is ignored it asks for JSON in words too, and post-validates and retries).',
      `<endpoint> is an endpoint reference: ${ENDPOINT_PREFIX}http://127.0.0.1:8080/v1#<model>[&key=ENV][&form=...] (docs/models.md).`,
    ].join('\n'))
    .argument('<endpoint>', 'an endpoint reference (several, comma-joined, are probed one by one)')
    .option('--json', 'print the verdicts as JSON')
    .option('--no-store', 'print only; do not store the verdicts');
  cmd.action(act(ctx, (ref: string, o: ProbeFlags) => probeCommand(ref, o, ctx.io)));
}

/** The endpoints of `ref` (`openai:` may be left out). Errors: UsageError with the parser's message. */
function endpointsOf(ref: string): EndpointSpec[] {
  const full = ref.startsWith(ENDPOINT_PREFIX) ? ref : `${ENDPOINT_PREFIX}${ref}`;
  try {
    return parseEndpointRef(full);
  } catch (e) {
    if (e instanceof EndpointRefError) throw new UsageError(`<endpoint>: ${e.message}`);
    throw e;
  }
}

async function probeCommand(ref: string, o: ProbeFlags, io: Io): Promise<number> {
  const results: Array<{ endpoint: string; verdicts: ProbeVerdicts }> = [];
  for (const spec of endpointsOf(ref)) {
    const verdicts = await probeEndpoint(spec);
    const id = endpointId(spec);
    if (o.store) writeVerdicts(id, verdicts);
    results.push({ endpoint: id, verdicts });
    if (!o.json) {
      io.stdout(`probe ${id}\n${verdictLines(verdicts).map((l) => `  ${l}\n`).join('')}${verdicts.details.map((d) => `    ${d}\n`).join('')}`);
    }
  }
  if (o.json) io.stdout(`${JSON.stringify(results, null, 2)}\n`);
  else if (o.store) io.stdout(`verdicts stored in ${probesFile()}\n`);
  const failed = results.some((r) => r.verdicts.schema === 'failed' && r.verdicts.seed === 'failed' && r.verdicts.usage === 'failed');
  return failed ? 1 : 0;
}
