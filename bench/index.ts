/**
 * `npm run bench`: prints Flowlab's speed figures, each beside a baseline measured in the same
 * run, as ratios. Targets (issue 2): engine overhead < 0.2 ms per node on a 1,000-node graph;
 * store > 50,000 node events/s. Figures are printed, not asserted.
 */
import { benchEngine } from './engine.ts';
import { benchStore } from './store.ts';

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
