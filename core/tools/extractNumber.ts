import { extractFinalNumber } from '../tasks/index.ts';
import { ToolError, type Tool } from './tool.ts';

/**
 * Reads the final number of a text (rules: `extractFinalNumber` in core/tasks — `####`, an
 * `answer` field, `\boxed{}`, else the last number; `1,000` -> 1000, `50%` -> 50, `3/4` -> 0.75).
 * Input `text`: any value; objects with an `answer` field use that field, other objects and
 * arrays are JSON-stringified. Output: `{value}`.
 * Errors (ToolError): `BAD_INPUT` when the text is missing or holds no number; `ABORTED`.
 */
export const extractNumberTool: Tool = {
  name: 'extract_number',
  description: 'Reads the final number from a text or answer object (after "####", an "answer" field, else the last number). Returns {value}.',
  inputs: {
    text: { type: 'any', description: 'Text (or an object, read as JSON) to take the final number from.' },
  },
  output: {
    type: 'object',
    properties: { value: { type: 'number' } },
    required: ['value'],
    additionalProperties: false,
  },
  run(inputs, ctx): { value: number } {
    if (ctx.signal?.aborted) throw new ToolError('ABORTED', 'extract_number was cancelled before it ran', { tool: 'extract_number' });
    const text = inputs.text;
    if (text === undefined || text === null) {
      throw new ToolError('BAD_INPUT', "input 'text' is missing", { tool: 'extract_number' });
    }
    const value = extractFinalNumber(text);
    if (value === null) {
      throw new ToolError('BAD_INPUT', `no number found in ${preview(text)}`, { tool: 'extract_number' });
    }
    return { value };
  },
};

function preview(value: unknown): string {
  let s: string;
  try {
    s = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);
}
