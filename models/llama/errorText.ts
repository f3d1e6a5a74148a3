/** A thrown value's message (its name when the message is empty; `String(value)` for non-errors), for error messages. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
