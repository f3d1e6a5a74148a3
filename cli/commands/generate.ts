/**
 * `flowlab generate --model <file|endpoint> --prompt <text|@file>`: the Models view's playground
 * in a terminal, through the same host code (host/playground.ts) and the same payload checks
 * (the `startGeneration` schema): the reply streamed to stdout as it is sampled, the prompt as the
 * model sees it with `--show-prompt`, then the token counts and tokens/s on stderr (`--json`: one
 * object instead). Same seed and settings, same text with a local model.
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError, MAX_PLAYGROUND_TOKENS, PLAYGROUND_DEFAULTS, validatePayload, type PlaygroundEvent, type StartGenerationRequest } from '../../core/api/index.ts';
import { ENDPOINT_PREFIX, isEndpointRef } from '../../core/model/index.ts';
import { readGgufHeader } from '../../host/models.ts';
import { Playground } from '../../host/playground.ts';
import { llamaProvider } from '../../models/factory.ts';
import { act, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';

interface GenerateFlags {
  model: string;
  prompt: string;
  system?: string;
  temperature: string;
  topK: string;
  topP: string;
  minP: string;
  seed: string;
  maxTokens: string;
  jsonSchema?: string;
  threads?: string;
  showPrompt?: boolean;
  json?: boolean;
}

/** The payload fields and the flags that set them, for errors in the flags' names. */
const FLAG: Record<string, string> = {
  model: '--model', prompt: '--prompt', system: '--system', temperature: '--temperature', topK: '--top-k', topP: '--top-p',
  minP: '--min-p', seed: '--seed', maxTokens: '--max-tokens', jsonSchema: '--json-schema', threads: '--threads',
};

/** `flowlab generate`. */
export function define(cmd: Command, ctx: CommandContext): void {
  const d = PLAYGROUND_DEFAULTS;
  cmd
    .usage('--model <file.gguf|openai:...> --prompt <text|@file> [--system <text|@file>] [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--seed S] [--max-tokens N] [--json-schema <json|@file>] [--threads N] [--show-prompt] [--json]')
    .description([
      "One generation with one model, streamed to stdout as it is sampled: the Models view's playground",
      'in a terminal (the same checks, the same code). --show-prompt prints the prompt as the model sees',
      'it (its chat template applied) on stderr first; the token counts and tokens/s follow on stderr.',
      'The same seed and settings give the same text with a local model. Ctrl-C stops it.',
    ].join('\n'))
    .requiredOption('--model <file|endpoint>', `a GGUF file, or an endpoint reference ${ENDPOINT_PREFIX}http://host:8080/v1#<model> (docs/models.md)`)
    .requiredOption('--prompt <text|@file>', 'the user text (@file reads it from a file)')
    .option('--system <text|@file>', 'system text (the chat template places it)')
    .option('--temperature <t>', '0..5; 0 is greedy', String(d.temperature))
    .option('--top-k <k>', '0..1000; 0 turns it off', String(d.topK))
    .option('--top-p <p>', '0..1; 1 turns it off', String(d.topP))
    .option('--min-p <p>', '0..1; 0 turns it off', String(d.minP))
    .option('--seed <s>', '0..2^32-1', String(d.seed))
    .option('--max-tokens <n>', `completion tokens, 1..${MAX_PLAYGROUND_TOKENS}`, String(d.maxTokens))
    .option('--json-schema <json|@file>', 'a JSON schema object constraining the reply (a grammar for local models)')
    .option('--threads <n>', "CPU threads of a local model (default: flowlab tune's best, else by the file's size)")
    .option('--show-prompt', 'print the prompt as the model sees it on stderr before the reply')
    .option('--json', 'print one JSON object at the end instead of streaming');
  cmd.action(act(ctx, (o: GenerateFlags) => generate(o, ctx.io)));
}

/** `value`, or the text of the file after `@`. @throws UsageError naming the flag when the file cannot be read. */
function textOf(value: string, flag: string): string {
  if (!value.startsWith('@')) return value;
  const file = path.resolve(value.slice(1));
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag} ${value}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** A number flag's value. @throws UsageError naming the flag. */
function numberOf(value: string, flag: string): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${flag} takes a number, got "${value}"`);
  return n;
}

/** The flags as the API's payload, checked by its schema. @throws UsageError naming the flag at fault. */
export function payloadOf(o: GenerateFlags): StartGenerationRequest {
  let jsonSchema: unknown;
  if (o.jsonSchema !== undefined) {
    try {
      jsonSchema = JSON.parse(textOf(o.jsonSchema, '--json-schema'));
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`--json-schema is not JSON: ${(err as Error).message}`);
    }
  }
  const model = o.model.startsWith(ENDPOINT_PREFIX) ? o.model : path.resolve(o.model);
  const payload = {
    model, prompt: textOf(o.prompt, '--prompt'), ...(o.system !== undefined && { system: textOf(o.system, '--system') }),
    temperature: numberOf(o.temperature, '--temperature'), topK: numberOf(o.topK, '--top-k'), topP: numberOf(o.topP, '--top-p'),
    minP: numberOf(o.minP, '--min-p'), seed: numberOf(o.seed, '--seed'), maxTokens: numberOf(o.maxTokens, '--max-tokens'),
    ...(jsonSchema !== undefined && { jsonSchema }), ...(o.threads !== undefined && { threads: numberOf(o.threads, '--threads') }),
  };
  try {
    return validatePayload('startGeneration', payload);
  } catch (err) {
    if (err instanceof ApiError && err.field) {
      const why = err.message.replace(/^startGeneration: payload field "[^"]+": /, '').replace(/^startGeneration: /, '');
      throw new UsageError(`${FLAG[err.field] ?? err.field} ${why}`);
    }
    throw err;
  }
}

/** The stats line the window shows under a reply. */
export function statsLine(e: Extract<PlaygroundEvent, { type: 'generation' }>): string {
  const parts = [`${e.completionTokens ?? '–'} completion tokens`];
  if (e.tokensPerSecond !== undefined) parts.push(`${e.tokensPerSecond.toFixed(1)} tokens/s`);
  if (e.firstTokenMs !== undefined) parts.push(`first token ${Math.round(e.firstTokenMs)} ms`);
  if (e.ms !== undefined) parts.push(`${Math.round(e.ms)} ms`);
  if (e.promptTokens !== undefined) parts.push(`${e.promptTokens} prompt tokens`);
  if (e.stopReason) parts.push(`stopped: ${e.stopReason === 'maxTokens' ? 'max tokens' : e.stopReason === 'eos' ? 'end of text' : e.stopReason}`);
  return parts.join(' · ');
}

async function generate(o: GenerateFlags, io: Io): Promise<number> {
  const payload = payloadOf(o);
  let end: Extract<PlaygroundEvent, { type: 'generation' }> | undefined;
  let rendered: Extract<PlaygroundEvent, { type: 'generation' }> | undefined;
  let pieces = 0;
  const playground = new Playground({
    createProvider: llamaProvider,
    checkModel: readGgufHeader,
    emit: (e) => {
      if (e.type === 'generationText') {
        pieces++;
        if (!o.json) io.stdout(e.text);
      } else if (e.type === 'generation') {
        if (e.status !== 'running') end = e;
        else if (e.promptForm !== undefined) {
          rendered = e;
          if (o.showPrompt && !o.json) {
            const how = e.promptForm === 'template' ? 'its chat template applied' : e.promptForm === 'plain' ? 'no chat template: plain completion' : 'the endpoint applies its own template';
            const body = e.promptForm === 'server' ? '(not seen here: the system text and prompt are sent as chat messages)' : (e.renderedPrompt ?? '');
            io.stderr(`--- prompt as the model sees it (${how}${e.promptTokens !== undefined ? `, ${e.promptTokens} tokens` : ''}) ---\n${body}\n--- reply ---\n`);
          }
        }
      }
    },
  });
  let cancelled = false;
  const onSigint = (id: string) => () => {
    cancelled = true;
    void playground.cancel(id);
  };
  try {
    let id: string;
    try {
      ({ generationId: id } = await playground.start(payload));
    } catch (err) {
      // A schema the host refuses (not draft-07, or beyond the local grammar): the flag's fault, exit 2.
      if (err instanceof ApiError && err.code === 'BAD_REQUEST' && err.field === 'jsonSchema') throw new UsageError(`--json-schema: ${err.message.replace(/^startGeneration: jsonSchema: /, '')}`);
      // A file that is missing or not a GGUF: exit 1 naming it, as every command does for a bad model file.
      if (err instanceof ApiError && err.code === 'BAD_REQUEST' && !isEndpointRef(payload.model)) throw new CommandError('BAD_FILE', `--model: ${err.message.replace(/^startGeneration: /, '')}`, { file: payload.model, field: 'model' }, { cause: err });
      if (err instanceof ApiError && err.code === 'BAD_REQUEST') throw new UsageError(`--model ${err.message.replace(/^startGeneration: /, '')}`);
      throw err;
    }
    const stop = onSigint(id);
    process.once('SIGINT', stop);
    try {
      await playground.settled(id);
    } finally {
      process.off('SIGINT', stop);
    }
  } finally {
    await playground.dispose();
  }
  if (!end) throw new Error('flowlab generate: the generation ended without its closing event');
  if (o.json) {
    const { type: _t, generationId: _g, status, ...rest } = end;
    io.stdout(`${JSON.stringify({ status, ...rest, pieces, ...(rendered?.promptForm && { promptForm: rendered.promptForm }), ...(rendered?.renderedPrompt !== undefined && { renderedPrompt: rendered.renderedPrompt }) }, null, 2)}\n`);
  } else {
    // Ends the streamed line; a generation that streamed nothing (one that failed at once) writes no blank line.
    if (pieces > 0) io.stdout('\n');
    if (end.status === 'completed') io.stderr(`${statsLine(end)}\n`);
  }
  if (end.status === 'failed') {
    io.stderr(`flowlab generate: ${end.message ?? 'failed'}\n`);
    return 1;
  }
  return end.status === 'cancelled' || cancelled ? 130 : 0;
}
