/**
 * `npm run bench`: prints Flowlab's speed figures, each beside a baseline measured in the same
 * run, as ratios. Targets (issue 2): engine overhead < 0.2 ms per node on a 1,000-node graph;
 * store > 50,000 node events/s. Issue 3: credit over a 100,000-node trace < 100 ms, scaling
 * linearly (100k / 10k time about 10). Figures are printed, not asserted.
 */
import { benchEngine } from './engine.ts';
import { benchStore } from './store.ts';
import { benchCredit } from './credit.ts';

const fmt = (x: number, d = 3) => x.toFixed(d);

const engine = await benchEngine();
console.log(`engine   ${engine.nodes}-node graph, instant (scripted, simulated) model`);
console.log(`  engine run        ${fmt(engine.engineMsPerNode, 4)} ms/node`);
console.log(`  bare call loop    ${fmt(engine.baselineMsPerNode, 4)} ms/call   (baseline)`);
console.log(`  overhead          ${fmt(engine.overheadMsPerNode, 4)} ms/node   target < 0.2   ${engine.overheadMsPerNode < 0.2 ? 'OK' : 'MISSED'}`);
console.log(`  ratio             ${fmt(engine.ratio, 1)}x the bare loop`);

const store = await benchStore();
console.log(`store    ${store.events} node events in ${store.runs} runs (${store.calls} model calls), WAL file DB`);
console.log(`  Store.saveRuns    ${Math.round(store.rowsPerSec).toLocaleString('en')} events/s   target > 50,000   ${store.rowsPerSec > 50_000 ? 'OK' : 'MISSED'}`);
console.log(`  bare insert loop  ${Math.round(store.baselineRowsPerSec).toLocaleString('en')} events/s   (baseline)`);
console.log(`  ratio             ${fmt(store.ratio, 2)} of the bare loop`);
console.log(`  one tx per run    ${Math.round(store.perRunRowsPerSec).toLocaleString('en')} events/s   (how a live run writes)`);

const credit = benchCredit();
console.log(`credit   computeCredit over a layered trace (1% failed nodes, ${credit.roots} roots at 100k)`);
console.log(`  100,000 nodes     ${fmt(credit.ms100k, 1)} ms   target < 100   ${credit.ms100k < 100 ? 'OK' : 'MISSED'}`);
console.log(`  10,000 nodes      ${fmt(credit.ms10k, 2)} ms   (baseline)`);
console.log(`  ratio 100k/10k    ${fmt(credit.ratio, 1)}   (linear is about 10; the 10k trace fits in CPU cache, so the ratio reads high)`);
