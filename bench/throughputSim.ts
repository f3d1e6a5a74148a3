/**
 * An event simulation of the throughput bench's schedule (bench/throughput.ts; docs/scale.md
 * "Measured"): `tasks` tasks of `calls` sequential calls each, `tasksInFlight` admitted at a time
 * in task order (at most 4 x tasksInFlight started and not committed, as core/schedule/ordered.ts),
 * on `slots` call slots; a call holds its slot for `latency` plus a uniform 0..2 x `overhead`
 * seconds (the lab's and the server's own time). Waiting calls are granted first come first served
 * (`fifo`) or least attained service first (`las`: the task with the fewest calls started; ties in
 * arrival order), the two rules of models/openai/pool.ts before and after issue 26's change.
 * No I/O, no lab code: it shows what the grant rule and the tasks per slot do to the makespan.
 *
 * Run: `npx tsx bench/throughputSim.ts` — one replica (16 slots) vs two (32), 200 tasks of 4
 * calls of 100 ms, 40 seeds, per rule and tasks per slot 1..3, at 10 and 20 ms of mean overhead.
 */
import { mulberry32 } from '../core/random.ts';

/** The makespan (s) of one simulated run. */
export function simulate(o: { tasks: number; calls: number; slots: number; tasksInFlight: number; rule: 'fifo' | 'las'; latency: number; overhead: number; seed: number }): number {
  const rng = mulberry32(o.seed);
  const stage = new Array<number>(o.tasks).fill(0);
  const done = new Array<boolean>(o.tasks).fill(false);
  const waiting: Array<{ task: number; seq: number }> = [];
  const busy: Array<{ end: number; task: number }> = [];
  let t = 0;
  let started = 0;
  let committed = 0;
  let inFlight = 0;
  let seq = 0;
  const window = 4 * o.tasksInFlight;
  const admit = () => {
    while (started < o.tasks && inFlight < o.tasksInFlight && started < committed + window) {
      waiting.push({ task: started++, seq: seq++ });
      inFlight++;
    }
  };
  admit();
  for (;;) {
    while (busy.length < o.slots && waiting.length) {
      let k = 0;
      for (let j = 1; j < waiting.length; j++) {
        const w = waiting[j]!;
        const b = waiting[k]!;
        const better = o.rule === 'fifo' ? w.seq < b.seq : stage[w.task]! < stage[b.task]! || (stage[w.task] === stage[b.task] && w.seq < b.seq);
        if (better) k = j;
      }
      const [w] = waiting.splice(k, 1);
      busy.push({ end: t + o.latency + rng() * 2 * o.overhead, task: w!.task });
    }
    if (!busy.length) return t;
    let first = 0;
    for (let j = 1; j < busy.length; j++) if (busy[j]!.end < busy[first]!.end) first = j;
    const [{ end, task }] = busy.splice(first, 1) as [{ end: number; task: number }];
    t = end;
    stage[task]!++;
    if (stage[task] === o.calls) {
      done[task] = true;
      inFlight--;
      while (committed < o.tasks && done[committed]) committed++;
      admit();
    } else waiting.push({ task, seq: seq++ });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seeds = 40;
  console.log('simulated makespan, 200 tasks x 4 calls of 100 ms, mean of 40 seeds: one replica (16 slots) | two (32 slots) | ratio');
  for (const overhead of [0.01, 0.02]) {
    for (const perSlot of [1, 2, 3]) {
      const cells = (['fifo', 'las'] as const).map((rule) => {
        let one = 0;
        let two = 0;
        for (let s = 0; s < seeds; s++) {
          one += simulate({ tasks: 200, calls: 4, slots: 16, tasksInFlight: 16 * perSlot, rule, latency: 0.1, overhead, seed: s });
          two += simulate({ tasks: 200, calls: 4, slots: 32, tasksInFlight: 32 * perSlot, rule, latency: 0.1, overhead, seed: 1000 + s });
        }
        return `${rule} ${(one / seeds).toFixed(2)} s | ${(two / seeds).toFixed(2)} s | ${(one / two).toFixed(3)}x`;
      });
      console.log(`  overhead ${overhead * 1000} ms, ${perSlot} task(s) per slot:  ${cells.join('    ')}`);
    }
  }
}
