import { evaluateExpression, MAX_EXPRESSION_LENGTH } from './expression.ts';
import { ToolError, typeName, type Tool } from './tool.ts';

/** Output of the `calculator` tool. */
export interface CalculatorOutput {
  /** The value, rounded to 15 significant digits to drop binary noise (`0.1+0.2` -> 0.3). */
  value: number;
  /** The expression as given. */
  expression: string;
}

/**
 * Evaluates an arithmetic expression (grammar and decisions: `evaluateExpression`).
 * Input `expression`: a string of at most 500 characters (a finite number is accepted as its text).
 * Output: `{value, expression}`.
 * Errors (ToolError): `BAD_INPUT` (missing, not a string, empty, too long), `PARSE_ERROR`,
 * `DIVISION_BY_ZERO`, `NOT_FINITE` (each with the column), `ABORTED`.
 */
export const calculatorTool: Tool = {
  name: 'calculator',
  description:
    `Evaluates arithmetic: numbers (1,000 and $5 allowed), + - * / % (remainder) ^ (power, also **), parentheses. ` +
    `Returns {value, expression}. At most ${MAX_EXPRESSION_LENGTH} characters.`,
  inputs: {
    expression: { type: 'string', description: 'An arithmetic expression, e.g. "(16 - 3 - 4) * 2".' },
  },
  output: {
    type: 'object',
    properties: { value: { type: 'number' }, expression: { type: 'string' } },
    required: ['value', 'expression'],
    additionalProperties: false,
  },
  run(inputs, ctx): CalculatorOutput {
    if (ctx.signal?.aborted) throw new ToolError('ABORTED', 'calculator was cancelled before it ran', { tool: 'calculator' });
    const raw = inputs.expression;
    let expression: string;
    if (typeof raw === 'string') expression = raw;
    else if (typeof raw === 'number' && Number.isFinite(raw)) expression = String(raw);
    else if (raw === undefined) throw new ToolError('BAD_INPUT', "input 'expression' is missing", { tool: 'calculator' });
    else throw new ToolError('BAD_INPUT', `input 'expression' must be a string, got ${typeName(raw)}`, { tool: 'calculator' });
    const value = evaluateExpression(expression);
    const rounded = Number(value.toPrecision(15));
    return { value: Object.is(rounded, -0) ? 0 : rounded, expression };
  },
};
