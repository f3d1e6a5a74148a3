/** Writes core/api/methods.ts (the API's method names) from the features (core/api/features/index.ts). */
import { writeFileSync } from 'node:fs';
import { methodsModuleText } from '../core/api/feature.ts';
import { FEATURES, WORKSHOP_FEATURE } from '../core/api/features/index.ts';

const out = new URL('../core/api/methods.ts', import.meta.url);
writeFileSync(out, methodsModuleText(FEATURES, WORKSHOP_FEATURE));
console.log(`wrote ${out.pathname}`);
