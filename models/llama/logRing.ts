/**
 * The last llama.cpp log lines one provider has seen, so a failed load or context creation can
 * quote llama.cpp's own reason (e.g. "tensor ... has incorrect shape") in its error message.
 */
import type { LlamaLogLevel } from 'node-llama-cpp';
import { logListeners, type LogListener } from './runtime.ts';

/** How long native log lines may trail the failing call's rejection, in milliseconds. */
const LOG_SETTLE_MS = 20;

/**
 * A ring of the last `capacity` (default 50) log lines, numbered from 1. While attached it is one
 * of the process's {@link logListeners} (see `runtime.ts`), so it receives the lines at or above
 * its level and passes them on to `onLog` (or stderr).
 */
export class LogRing {
  private readonly lines: { seq: number; level: string; message: string }[] = [];
  private seq = 0;
  private listener?: LogListener;

  constructor(private readonly capacity = 50) {}

  /**
   * Starts listening (once; later calls return the first call's level).
   * @returns the least severe level listened to, for the runtime's own log level.
   */
  attach(level: LlamaLogLevel, onLog?: (level: `${LlamaLogLevel}`, message: string) => void): LlamaLogLevel {
    if (!this.listener) {
      this.listener = {
        level,
        ...(onLog ? { onLog } : {}),
        record: (l, message) => this.record(l, message),
      };
      logListeners.add(this.listener);
    }
    return this.listener.level;
  }

  /** Stops listening; the lines kept stay readable. */
  detach(): void {
    if (this.listener) logListeners.delete(this.listener);
  }

  /** Keeps one line, dropping the oldest past `capacity`. */
  record(level: string, message: string): void {
    this.lines.push({ seq: ++this.seq, level, message });
    if (this.lines.length > this.capacity) this.lines.shift();
  }

  /** The number of the last line kept so far (0 before any): pass it to {@link errorsSince}. */
  mark(): number {
    return this.seq;
  }

  /**
   * Error- and fatal-level lines after `mark`, formatted for an error message:
   * ` (llama.cpp: a; b)`, or `''` when there are none. Waits {@link LOG_SETTLE_MS} first, since
   * native log lines can arrive a little after the failing call rejects.
   */
  async errorsSince(mark: number): Promise<string> {
    await new Promise((r) => setTimeout(r, LOG_SETTLE_MS));
    const lines = this.lines
      .filter((l) => l.seq > mark && (l.level === 'error' || l.level === 'fatal'))
      .map((l) => l.message.trim());
    return lines.length ? ` (llama.cpp: ${lines.join('; ')})` : '';
  }
}
