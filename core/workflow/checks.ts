/**
 * Named contract checks (MASS's `contracts`: what a sub-agent must hand back). A check returns
 * null when the output satisfies it, else a short message of what is violated.
 * Unknown check names are rejected when the workflow is validated.
 */
export type Check = (output: unknown, ctx: { inputs: Record<string, unknown> }) => string | null;

const isBlank = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && v.trim() === '');

function field(output: unknown, name: string): unknown {
  return output !== null && typeof output === 'object' && Object.hasOwn(output, name)
    ? (output as Record<string, unknown>)[name]
    : output;
}

export const BUILTIN_CHECKS: Record<string, Check> = {
  /** The output (or every top-level field of an object output) is non-empty. */
  non_empty: (out) => {
    if (isBlank(out)) return 'output is empty';
    if (out !== null && typeof out === 'object' && !Array.isArray(out)) {
      const blank = Object.entries(out).filter(([, v]) => isBlank(v)).map(([k]) => k);
      if (blank.length) return `empty field(s): ${blank.join(', ')}`;
    }
    return null;
  },
  /** The output's `answer` field (or the output itself) is a finite number or numeric text. */
  numeric_answer: (out) => {
    const v = field(out, 'answer');
    if (typeof v === 'number') return Number.isFinite(v) ? null : 'answer is not finite';
    if (typeof v === 'string' && /^\s*[-+]?\$?\d[\d,]*(\.\d+)?\s*$/.test(v)) return null;
    return `answer ${JSON.stringify(v)} is not a number`;
  },
  /** The output's `expression` field (or the output) is arithmetic: digits, operators, parentheses. */
  arithmetic_expression: (out) => {
    const v = field(out, 'expression');
    if (typeof v !== 'string' || !/\d/.test(v)) return `expression ${JSON.stringify(v)} has no number`;
    const bad = v.match(/[^0-9+\-*/%^().,$\s×÷]/);
    return bad ? `expression contains '${bad[0]}', not arithmetic` : null;
  },
  /**
   * The output's text mentions the node's `target` input as a whole word, case-insensitive (the
   * `learn-team` planner's sub-goal; see core/tasks/learn.ts). The prompt need not show the target.
   */
  mentions_target: (out, { inputs }) => {
    const target = inputs.target;
    if (typeof target !== 'string' || !target) return 'the node has no "target" input to look for';
    const text = typeof out === 'string' ? out : JSON.stringify(out ?? '');
    const escaped = target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`(^|[^\\p{L}])${escaped}(?![\\p{L}])`, 'iu').test(text) ? null : `the output never says "${target}"`;
  },
  /** A `verdict` field is one of ok / revise. */
  verdict: (out) => {
    const v = field(out, 'verdict');
    return v === 'ok' || v === 'revise' ? null : `verdict ${JSON.stringify(v)} is not "ok" or "revise"`;
  },
};

export class CheckRegistry {
  private readonly checks = new Map<string, Check>(Object.entries(BUILTIN_CHECKS));
  register(name: string, check: Check): this {
    this.checks.set(name, check);
    return this;
  }
  get(name: string): Check | undefined {
    return this.checks.get(name);
  }
  has(name: string): boolean {
    return this.checks.has(name);
  }
  names(): string[] {
    return [...this.checks.keys()];
  }
}
