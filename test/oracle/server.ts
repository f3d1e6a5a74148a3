/**
 * Two OpenAI-compatible test models on loopback, written for Flowlab (SIMULATED: neither is a
 * real model). Both look each call's task up by the text its prompt shows (test/oracle/book.ts)
 * and know its gold answer:
 * - `oracle` answers rightly in whatever shape the call asks: exactly the JSON its schema
 *   wants, or the answer as plain text (a code task's whole function in a python block);
 * - `messy` says the same content the way real models do on a server that does not enforce
 *   schemas: a `<think>` block (a draft inside it, a wrong code block for code tasks), thinking
 *   sent apart as `reasoning_content`, a template's hidden prefill (thinking, then `</think>`),
 *   JSON in a fenced block or inside a sentence, numbers in text fields written `$18.00` or
 *   `1,234`. Its thinking counts against `max_tokens`, as on real servers, so a short limit cuts it.
 * Both honour `max_tokens` (clipping the reply, `finish_reason: "length"`) and report `usage`,
 * counted by `countTokens`. Which messy shape a call gets is a hash of its prompt, so a run is
 * reproducible. Routes: `GET /v1/models`, `POST /v1/chat/completions` (non-streamed).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fnv1a32 } from '../../core/random.ts';
import type { Task } from '../../core/tasks/index.ts';
import { clipTokens, countTokens, fill, goldReply, isCodeTask, numberOf, TaskBook, type Schema, type SkillHints } from './book.ts';

export type TestModelStyle = 'oracle' | 'messy';

export interface TestModelOptions {
  style: TestModelStyle;
  /** The tasks it answers (a task not among them gets "I do not know."). */
  tasks: readonly Task[];
  /** The workflows' skills and their output values (for choosing a design's step). */
  skills?: SkillHints;
  /** Default 0: a free port. */
  port?: number;
}

export interface TestModelServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  /** The model reference Flowlab takes: `openai:<baseUrl>#<style>`. */
  ref: string;
  /** Calls answered, and calls whose task it did not find. */
  stats: { calls: number; unknown: number; cut: number };
  close(): Promise<void>;
}

/** Starts a test model server (see the module comment). */
export async function serveTestModel(opts: TestModelOptions): Promise<TestModelServer> {
  const book = new TaskBook(opts.tasks);
  const stats = { calls: 0, unknown: 0, cut: 0 };
  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => send(res, 500, { error: { message: String(e) } }));
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url?.endsWith('/models')) return send(res, 200, { object: 'list', data: [{ id: opts.style, object: 'model' }] });
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = JSON.parse(text) as Record<string, unknown>;
    const messages = (body.messages as Array<{ role: string; content: unknown }>) ?? [];
    const prompt = messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
    const schema = schemaOf(body);
    const max = Number(body.max_tokens ?? body.max_completion_tokens ?? Infinity);
    stats.calls++;
    const task = book.find(prompt);
    if (!task) stats.unknown++;
    // A call whose prompt shows no task text (agentflow's executor sees only the sub-goal) is
    // answered for a blank task: a schema's fields filled, free text "I do not know.".
    const known = task ?? BLANK;
    const reply = task || schema ? (opts.style === 'oracle' ? oracleReply(known, schema, opts.skills) : messyReply(known, schema, opts.skills, prompt)) : { content: 'I do not know.' };
    const reasoningTokens = countTokens(reply.reasoning ?? '');
    let content = reply.content;
    let finish = 'stop';
    if (reasoningTokens + countTokens(content) > max) {
      content = clipTokens(content, Math.max(0, max - reasoningTokens));
      finish = 'length';
      stats.cut++;
    }
    const message: Record<string, unknown> = { role: 'assistant', content };
    if (reply.reasoning) message.reasoning_content = reply.reasoning;
    const completion = reasoningTokens + countTokens(content);
    send(res, 200, {
      id: `chatcmpl-${stats.calls}`, object: 'chat.completion', model: opts.style,
      choices: [{ index: 0, message, finish_reason: finish }],
      usage: { prompt_tokens: countTokens(prompt), completion_tokens: completion, total_tokens: countTokens(prompt) + completion },
    });
  }
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', r));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    baseUrl,
    ref: `openai:${baseUrl}#${opts.style}`,
    stats,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const BLANK: Task = { id: 'blank', index: 0, input: {}, expected: '' };

interface Reply {
  content: string;
  reasoning?: string;
}

function oracleReply(task: Task, schema: Schema | undefined, skills?: SkillHints): Reply {
  return { content: schema ? JSON.stringify(fill(schema, task, skills)) : goldReply(task) };
}

/** The four messy shapes, chosen by a hash of the prompt. */
function messyReply(task: Task, schema: Schema | undefined, skills: SkillHints | undefined, prompt: string): Reply {
  const shape = fnv1a32(prompt) % 4;
  const code = isCodeTask(task);
  const thought = code ? 'Draft:\n```python\ndef draft():\n    return None\n```\nThat draft is wrong; the full function follows.' : 'Let me work this out step by step. Draft: {"answer": "?"}';
  const answer = schema ? messyJson(fill(schema, task, skills), shape, gradedAsNumber(task)) : code ? `Here is the function:\n\n${goldReply(task)}\n\nIt passes the examples.` : goldReply(task);
  switch (shape) {
    case 0:
      return { content: `<think>\n${thought}\n</think>\n\n${answer}` };
    case 1:
      return { reasoning: thought, content: answer };
    case 2:
      return { content: `${thought}\n</think>\n\n${answer}` };
    default:
      return { content: answer };
  }
}

/** A JSON value as a chatty model writes it: in a fenced block after a sentence, or inside a sentence; numbers in text fields with units and separators. */
function messyJson(value: unknown, shape: number, numbers: boolean): string {
  const json = JSON.stringify(numbers ? messyNumbers(value) : value, null, shape % 2 ? undefined : 2);
  return shape === 1 ? `The result is ${json} as requested.` : `Sure! Here is the JSON:\n\`\`\`json\n${json}\n\`\`\``;
}

/** Whether a task's answer is graded as a number (GSM8K: its meta holds the worked solution), where `$18.00` and `1,234` are fair ways to write it; a year in a multi-hop answer is not. */
function gradedAsNumber(task: Task): boolean {
  return typeof task.meta?.solution === 'string';
}

/** Text fields holding a whole number written as a person might: `1,234` from a thousand up, else `$18.00`. */
function messyNumbers(value: unknown): unknown {
  if (typeof value === 'string') {
    const n = numberOf(value);
    if (n === undefined || !Number.isInteger(n) || n < 0 || value.includes(':')) return value;
    return n >= 1000 ? n.toLocaleString('en-US') : `$${n}.00`;
  }
  if (Array.isArray(value)) return value.map(messyNumbers);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'expression' || k === 'command' ? v : messyNumbers(v)]));
  return value;
}

/** The JSON schema a request carries, in any of the forms Flowlab sends (models/openai/body.ts). */
function schemaOf(body: Record<string, unknown>): Schema | undefined {
  const rf = body.response_format as { json_schema?: { schema?: Schema }; schema?: Schema } | undefined;
  const so = body.structured_outputs as { json?: Schema } | undefined;
  const format = typeof body.format === 'object' ? (body.format as Schema) : undefined;
  return rf?.json_schema?.schema ?? rf?.schema ?? (body.json_schema as Schema | undefined) ?? (body.guided_json as Schema | undefined) ?? so?.json ?? format;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
