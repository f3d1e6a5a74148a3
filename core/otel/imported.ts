/** What reading a trace gives, before the store assigns ids: shared by the Flowlab and foreign readers. */
import type { RunRecord } from '../results/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { TraceGraph } from './graph.ts';
import { OtelError } from './errors.ts';
import { msOf, type AttrValue, type OtlpSpan } from './otlpJson.ts';

/** One trace read back as a Flowlab run. */
export interface ImportedRun {
  /** `flowlab`: written by Flowlab's exporter, read losslessly; `foreign`: another framework's, mapped (fromForeign.ts). */
  producer: 'flowlab' | 'foreign';
  traceId: string;
  /** Spans the trace had. */
  spans: number;
  /** Whether message contents, inputs and outputs were in the trace. */
  content: boolean;
  /** The source's own ids (Flowlab traces). */
  sourceRunId?: string;
  sourceExperimentId?: string;
  workflowName: string;
  /** The workflow text, when the trace carried it. */
  workflowYaml?: string;
  dataset?: string;
  split?: string;
  experimentSeed?: number;
  task: { taskId: string; input: unknown; expected?: string };
  /** The run record without the ids the store gives it, its failure counts and credit (computed on import). */
  run: Pick<RunRecord, 'status' | 'score' | 'correct' | 'seed' | 'promptTokens' | 'completionTokens' | 'startedAt' | 'endedAt'> &
    Partial<Pick<RunRecord, 'answer' | 'expected' | 'ladder' | 'simulated'>> & {
      /** The trace carried a grade (Flowlab's runs); credit's `silent` flag needs one. */
      graded: boolean;
    };
  /** Node runs in `seq` order; `runId` is filled in when stored. */
  events: NodeEvent[];
  graph: TraceGraph;
}

/** Typed attribute reads of one span; a missing or mistyped required attribute is `BAD_FLOWLAB_SPAN`. */
export class SpanAttrs {
  constructor(readonly span: OtlpSpan, readonly file: string) {}
  private bad(key: string, what: string): never {
    throw new OtelError('BAD_FLOWLAB_SPAN', `${this.file}: span "${this.span.name}" (${this.span.path}, span id ${this.span.spanId}): attribute ${key} ${what}`, { file: this.file, path: this.span.path });
  }
  has(key: string): boolean {
    const v = this.span.attributes[key];
    return v !== undefined && v !== null;
  }
  raw(key: string): AttrValue | undefined {
    return this.span.attributes[key] ?? undefined;
  }
  str(key: string): string | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    return typeof v === 'string' ? v : this.bad(key, `must be a string, got ${JSON.stringify(v)}`);
  }
  num(key: string): number | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    return typeof v === 'number' ? v : this.bad(key, `must be a number, got ${JSON.stringify(v)}`);
  }
  bool(key: string): boolean | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    return typeof v === 'boolean' ? v : this.bad(key, `must be a boolean, got ${JSON.stringify(v)}`);
  }
  strs(key: string): string[] | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : this.bad(key, `must be an array of strings, got ${JSON.stringify(v)}`);
  }
  nums(key: string): number[] | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    return Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : this.bad(key, `must be an array of numbers, got ${JSON.stringify(v)}`);
  }
  /** A JSON-text attribute, parsed. */
  json(key: string): unknown {
    const s = this.str(key);
    if (s === undefined) return undefined;
    try {
      return JSON.parse(s) as unknown;
    } catch (e) {
      return this.bad(key, `is not JSON (${(e as Error).message})`);
    }
  }
  needStr(key: string): string {
    return this.str(key) ?? this.bad(key, 'is missing');
  }
  needNum(key: string): number {
    return this.num(key) ?? this.bad(key, 'is missing');
  }
  needBool(key: string): boolean {
    return this.bool(key) ?? this.bad(key, 'is missing');
  }
  oneOf<T extends string>(key: string, values: readonly T[], required: true): T;
  oneOf<T extends string>(key: string, values: readonly T[], required?: false): T | undefined;
  oneOf<T extends string>(key: string, values: readonly T[], required = false): T | undefined {
    const v = required ? this.needStr(key) : this.str(key);
    if (v === undefined) return undefined;
    return (values as readonly string[]).includes(v) ? (v as T) : this.bad(key, `must be one of ${values.join(', ')}, got "${v}"`);
  }
  get startMs(): number {
    return msOf(this.span.startNs);
  }
  get endMs(): number {
    return msOf(this.span.endNs);
  }
}

/** The text of a GenAI messages attribute (`[{role, parts: [{type: 'text', content}]}]`) for the roles kept, parts joined by newlines. */
export function messagesText(v: unknown, keep: (role: string) => boolean): string | undefined {
  if (!Array.isArray(v)) return undefined;
  const texts: string[] = [];
  for (const m of v) {
    if (typeof m !== 'object' || m === null) continue;
    const role = String((m as { role?: unknown }).role ?? '');
    if (!keep(role)) continue;
    texts.push(...partsText((m as { parts?: unknown }).parts));
  }
  return texts.length ? texts.join('\n') : undefined;
}

/** The text contents of GenAI message parts (`[{type: 'text', content}]`). */
export function partsText(parts: unknown): string[] {
  if (!Array.isArray(parts)) return [];
  return parts.flatMap((p) => (p && typeof p === 'object' && typeof (p as { content?: unknown }).content === 'string' ? [(p as { content: string }).content] : []));
}

/** Appends `value` to the list under `key` (made on first use). */
export function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
