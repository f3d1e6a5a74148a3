#!/usr/bin/env node
// The flowlab CLI. Runs the TypeScript sources through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
