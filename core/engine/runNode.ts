import type { ValidateFunction } from 'ajv';
import type { RoleName } from '../ids.ts';
import { FlowlabError, errorMessage } from '../errors.ts';
import { ModelError } from '../model/errors.ts';
import type { GenerateRequest, ModelProvider, SamplingParams } from '../model/provider.ts';
import { repairJson } from '../model/repair.ts';
import { splitReply } from '../model/thinking.ts';
import type { ModelCallRecord } from '../trace/events.ts';
import type { CheckRegistry } from '../workflow/checks.ts';
import type { ToolShape } from '../workflow/compile.ts';
import type { Graph, GraphNode } from '../workflow/graph.ts';
import { jsonSchemaValidator } from '../workflow/jsonSchema.ts';
import { renderTemplate, templateRefs } from '../workflow/template.ts';
import { deriveSeed } from '../random.ts';
import { execution, infrastructure, NodeFailure, wiring } from './failure.ts';

/** A tool the engine can run (core/tools' `Tool` satisfies it). */
export interface RunnableTool extends ToolShape {
  name: string;
  run(inputs: Record<string, unknown>, ctx: ToolRunContext): unknown;
}
/** What a tool run is told: cancellation, and where it runs (for fault injection and logs). */
export interface ToolRunContext {
  signal?: AbortSignal;
  taskKey?: string;
  nodeId?: string;
  attempt?: number;
}
export interface ToolSource {
  get(name: string): RunnableTool | undefined;
}

export interface NodeContext {
  graph: Graph;
  provider: ModelProvider;
  tools: ToolSource;
  checks: CheckRegistry;
  taskKey: string;
  taskInput: Record<string, unknown>;
  runSeed: number;
  attempt: number;
  timeoutMs: number;
  signal: AbortSignal;
  /**
   * Hint-card text for a role (test-time distillation); '' when none. Rendered into the prompt's
   * `{{hints}}` slot; when the template has none, appended to the role's system instructions
   * under HINTS_HEADING.
   */
  hints?: (role: RoleName) => string;
  /** Resolves the model reference a role uses (CLI overrides such as --role-model). */
  modelFor?: (role: RoleName) => string;
  /** Sampling that overrides every agent node's own (rollouts sample at one temperature, topK 0, topP 1, minP 0). */
  sampling?: Partial<Pick<SamplingParams, 'temperature' | 'topK' | 'topP' | 'minP'>>;
  /** Ask the provider for the token ids fed and sampled, and keep them on each call record (training). */
  recordTokens?: boolean;
  /** Refuse repaired structured output (the workflow's `limits.strict_output`; see runAgent). */
  strictOutput?: boolean;
}

export interface NodeResult {
  output: unknown;
  calls: ModelCallRecord[];
}

const ajv = jsonSchemaValidator;
const validators = new WeakMap<object, ValidateFunction>();
function validatorFor(schema: object): ValidateFunction {
  let v = validators.get(schema);
  if (!v) validators.set(schema, (v = ajv.compile(schema)));
  return v;
}

/**
 * Whether an output satisfies a node's contract (its JSON schema and named checks) — what the
 * engine enforces after parsing. Used by fault injection to build contract-valid wrong outputs.
 */
export function satisfiesContract(node: GraphNode, output: unknown, checks: CheckRegistry): boolean {
  if (node.contract?.schema && !validatorFor(node.contract.schema)(output)) return false;
  return (node.contract?.checks ?? []).every((name) => checks.get(name)?.(output, { inputs: {} }) === null);
}

/**
 * Runs one node once. Returns its output and model calls, or throws a NodeFailure carrying the
 * calls made so far (`failure.calls`) — never any other error.
 */
export async function runNode(node: GraphNode, inputs: Record<string, unknown>, ctx: NodeContext): Promise<NodeResult> {
  const calls: ModelCallRecord[] = [];
  try {
    const output = node.kind === 'tool' ? await runTool(node, inputs, ctx) : await runAgent(node, inputs, ctx, calls);
    for (const name of node.contract?.checks ?? []) {
      const check = ctx.checks.get(name);
      if (!check) throw wiring('INVALID_CONFIG', `unknown check "${name}"`);
      const problem = check(output, { inputs });
      if (problem) throw execution('CONTRACT_VIOLATION', `check ${name} failed: ${problem}`);
    }
    return { output, calls };
  } catch (e) {
    const f = e instanceof NodeFailure ? e : execution('AGENT_ERROR', errorMessage(e));
    (f as NodeFailure & { calls?: ModelCallRecord[] }).calls = calls;
    throw f;
  }
}

async function runAgent(node: GraphNode, inputs: Record<string, unknown>, ctx: NodeContext, calls: ModelCallRecord[]): Promise<unknown> {
  const role = node.role ? ctx.graph.roles.get(node.role) : undefined;
  if (!role) throw wiring('INVALID_CONFIG', `node "${node.id}" has no role to run it`);
  const template = node.prompt ?? defaultPrompt(inputs);
  const hints = ctx.hints?.(role.name) ?? '';
  const { prompt, system } = assemblePrompt(template, node, inputs, ctx.taskInput, role.instructions, hints);
  const callIndex = calls.length;
  const request: GenerateRequest = {
    role: role.name,
    model: ctx.modelFor?.(role.name) ?? role.model,
    system: system || undefined,
    prompt,
    params: { temperature: node.temperature, maxTokens: node.maxTokens, stop: node.stop, ...ctx.sampling },
    seed: deriveSeed(ctx.runSeed, node.id, ctx.attempt, callIndex),
    jsonSchema: node.contract?.schema,
    key: { taskKey: ctx.taskKey, nodeId: node.id, attempt: ctx.attempt, callIndex },
  };
  if (ctx.recordTokens) request.recordTokens = true;
  const startedAt = Date.now();
  const record: ModelCallRecord = {
    callIndex,
    role: role.name,
    modelRef: request.model,
    model: request.model,
    system: request.system,
    prompt,
    params: request.params,
    seed: request.seed,
    jsonSchema: request.jsonSchema,
    completion: '',
    promptTokens: 0,
    completionTokens: 0,
    ms: 0,
    startedAt,
  };
  calls.push(record);
  let text: string;
  try {
    const res = await withTimeout(ctx, (signal) => ctx.provider.generate({ ...request, signal }));
    // Thinking apart from the answer, the same for every provider: a provider that split it
    // already (a local model knows its prefill) says so with `thinking`; any other reply is split
    // here (a `<think>` block, a server's hidden prefill). Contracts and graders see the answer.
    const split = res.thinking === undefined ? splitReply(res.text) : { answer: res.text, thinking: res.thinking };
    text = split.answer;
    Object.assign(record, {
      model: res.model,
      completion: text,
      promptTokens: res.tokens.prompt,
      completionTokens: res.tokens.completion,
      ms: res.ms,
      stopReason: res.stopReason,
      seed: res.seed,
    });
    if (res.promptTokenIds) record.promptTokenIds = res.promptTokenIds;
    if (res.completionTokenIds) record.completionTokenIds = res.completionTokenIds;
    if (res.renderedPrompt !== undefined) record.renderedPrompt = res.renderedPrompt;
    if (split.thinking !== undefined) record.thinking = split.thinking;
    if (res.applied) record.applied = res.applied;
    if (res.promptTokensEvaluated !== undefined) record.promptTokensEvaluated = res.promptTokensEvaluated;
  } catch (e) {
    record.ms = Date.now() - startedAt;
    const f = classifyCallError(e, ctx);
    record.error = `${f.code}: ${f.message}`;
    throw f;
  }
  if (!node.contract?.schema) return text.trim();
  return structuredOutput(text, node, record, ctx.strictOutput === true);
}

/**
 * A reply's value under its node's schema. The answer as a whole first: JSON valid under the
 * schema is the output. Otherwise, unless `strict`, the JSON value written inside it (a fenced
 * block, an object in prose; core/model/repair.ts) when valid, with `record.repair` saying how it
 * was found. Else a typed failure: CONTRACT_VIOLATION when some JSON was found (the whole answer,
 * else the first value inside it), UNPARSABLE_OUTPUT when none was; a reply cut at `max_tokens`
 * says so, and a strict refusal names what a repair would have taken.
 */
function structuredOutput(text: string, node: GraphNode, record: ModelCallRecord, strict: boolean): unknown {
  const validate = validatorFor(node.contract!.schema!);
  const cut = record.stopReason === 'maxTokens' ? ` (cut off at max_tokens=${node.maxTokens})` : '';
  let value: unknown;
  let parsed = true;
  try {
    value = JSON.parse(text);
  } catch {
    parsed = false;
  }
  if (parsed && validate(value)) return value;
  const found = repairJson(text, (v) => validate(v) === true);
  const violation = (checked: unknown, where: string, note = '') => {
    validate(checked);
    return execution('CONTRACT_VIOLATION', `output${where} violates the schema${cut}: ${ajv.errorsText(validate.errors, { dataVar: 'output' })}${note}`);
  };
  if (found.ok) {
    if (!strict) {
      record.repair = found.kind;
      return found.value;
    }
    const refused = `; strict_output refused the ${found.kind} JSON value inside it that would repair it`;
    if (!parsed) throw execution('UNPARSABLE_OUTPUT', `output is not valid JSON${cut}${refused}: ${clip(text)}`);
    throw violation(value, '', refused);
  }
  if (parsed) throw violation(value, '');
  if (!('kind' in found)) throw execution('UNPARSABLE_OUTPUT', `output is not valid JSON${cut}: ${clip(text)}`);
  throw violation(found.invalid, ` (the ${found.kind} JSON value inside it)`);
}

async function runTool(node: GraphNode, inputs: Record<string, unknown>, ctx: NodeContext): Promise<unknown> {
  const tool = node.tool ? ctx.tools.get(node.tool) : undefined;
  if (!tool) throw wiring('UNKNOWN_TOOL', `unknown tool "${node.tool}"`);
  for (const [name, def] of Object.entries(tool.inputs)) {
    if (!def.optional && (inputs[name] === undefined || inputs[name] === null)) {
      throw wiring('MISSING_PORT', `tool "${tool.name}" needs input "${name}", which is not wired or is empty`);
    }
  }
  try {
    return await withTimeout(ctx, (signal) => Promise.resolve(tool.run(inputs, { signal, taskKey: ctx.taskKey, nodeId: node.id, attempt: ctx.attempt })));
  } catch (e) {
    if (e instanceof NodeFailure) throw e;
    // The tool's own code leads the message, once (a ToolError's message already starts with it).
    // Tools are plug-ins: one may throw any Error with a string `code`, as Node's errors carry.
    const message = errorMessage(e);
    const code = e instanceof FlowlabError ? e.code : (e as { code?: unknown } | null)?.code;
    const lead = typeof code === 'string' && !message.startsWith(`${code}: `) ? `${code}: ` : '';
    throw execution('TOOL_ERROR', `${tool.name}: ${lead}${message}`);
  }
}

/** The abort reason of a node's own timeout (told apart from a run's cancellation). */
class Timeout extends FlowlabError<'TIMEOUT'> {
  override readonly name = 'Timeout';
  constructor(message = 'timed out') {
    super('TIMEOUT', message);
  }
}

/**
 * Runs `fn` with the node's timeout and the run's cancellation, whichever comes first. One
 * promise (`stop`) carries both: a cancellation rejects it before the node's own signal aborts,
 * a timeout aborts the node's signal (reason: Timeout) before rejecting it.
 */
async function withTimeout<T>(ctx: NodeContext, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (ctx.signal.aborted) throw infrastructure('CANCELLED', 'the run was cancelled');
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    onAbort = () => {
      reject(infrastructure('CANCELLED', 'the run was cancelled'));
      controller.abort(ctx.signal.reason);
    };
    timer = setTimeout(() => {
      controller.abort(new Timeout());
      reject(new Timeout(`timed out after ${ctx.timeoutMs} ms`));
    }, ctx.timeoutMs);
  });
  ctx.signal.addEventListener('abort', onAbort!, { once: true });
  try {
    return await Promise.race([fn(controller.signal), stop]);
  } catch (e) {
    if (e instanceof Timeout) throw execution('TIMEOUT', `timed out after ${ctx.timeoutMs} ms`);
    throw e;
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onAbort!);
  }
}

function classifyCallError(e: unknown, ctx: NodeContext): NodeFailure {
  if (e instanceof NodeFailure) return e;
  if (ctx.signal.aborted) return infrastructure('CANCELLED', 'the run was cancelled');
  if (e instanceof ModelError) {
    if (e.code === 'ABORTED') return infrastructure('CANCELLED', e.message);
    return infrastructure(e.code, e.message);
  }
  return execution('AGENT_ERROR', errorMessage(e));
}

/** The heading under which hint cards are appended to a role's system instructions. */
export const HINTS_HEADING = 'Hints from earlier tasks:';

/**
 * A call's text: the prompt rendered from `template`, and the system text (`''` for none).
 * Hints go where the template puts `{{hints}}`; a template without that slot gets them appended
 * to the role's instructions under HINTS_HEADING. The instructions (with those hints) are the
 * system text, unless the template puts `{{instructions}}` (and the node has no input port of
 * that name, which would win): they are then rendered there and no system text is sent, so a
 * prompt can lead with what calls of several roles share (the task) and the chat template's
 * system turn no longer parts them (prefix reuse, docs/models.md "Prefix reuse").
 */
function assemblePrompt(
  template: string,
  node: GraphNode,
  inputs: Record<string, unknown>,
  taskInput: Record<string, unknown>,
  instructions: string,
  hints: string,
): { prompt: string; system: string } {
  const refs = templateRefs(template);
  const roleText = hints && !refs.some((r) => r.root === 'hints') ? withHints(instructions, hints) : instructions;
  const slot = refs.some((r) => r.root === 'instructions') && !node.inputs.some((p) => p.name === 'instructions');
  const scope = { ...inputs, task: taskInput, hints, ...(slot ? { instructions: roleText } : {}) };
  return { prompt: renderTemplate(template, scope), system: slot ? '' : roleText };
}

function withHints(instructions: string, hints: string): string {
  return `${instructions ? instructions + '\n\n' : ''}${HINTS_HEADING}\n${hints}`;
}

function defaultPrompt(inputs: Record<string, unknown>): string {
  return Object.keys(inputs).map((k) => `${k}: {{${k}}}`).join('\n') + '\n';
}

function clip(s: string, n = 120): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > n ? one.slice(0, n) + '…' : one);
}
