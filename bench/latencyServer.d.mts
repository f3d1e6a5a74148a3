/** Types of bench/latencyServer.mjs (a SIMULATED loopback OpenAI-compatible server). */
export interface LatencyServerStats {
  /** Chat calls received (answered + rejected). */
  calls: number;
  answered: number;
  /** Calls answered 429. */
  rejected: number;
  inFlight: number;
  maxInFlight: number;
}
export interface LatencyServer {
  port: number;
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  stats(): LatencyServerStats;
  reset(): void;
  close(): Promise<void>;
}
export function startLatencyServer(options?: { latencyMs?: number; jitterMs?: number; rejectEvery?: number; port?: number }): Promise<LatencyServer>;
