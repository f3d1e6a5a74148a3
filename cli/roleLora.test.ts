import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { tempDir, tinyModel } from '../test/fixtures.ts';
import { UsageError } from './args.ts';
import { checkLoraFingerprints, withFingerprints } from '../models/resolve.ts';
import { parseRoleLoras } from './args.ts';
import { resolveModels } from './models.ts';

const TEAM = readFileSync('examples/gsm8k-team.yaml', 'utf8');
const { graph } = parseWorkflow(TEAM, { tools: defaultTools() });
const tmp = () => tempDir('role-lora');

describe('--role-lora parsing and model resolution', () => {
  it('role=adapter.gguf[@scale], repeatable per role; a trailing @number is the scale, any other @ is the path', () => {
    expect(parseRoleLoras(['solver=a.gguf', 'solver=b.gguf@0.5', 'planner=x@home/c.gguf', 'verifier=d.gguf@-1e-1'], 'u')).toEqual({
      solver: [{ path: path.resolve('a.gguf') }, { path: path.resolve('b.gguf'), scale: 0.5 }],
      planner: [{ path: path.resolve('x@home/c.gguf') }],
      verifier: [{ path: path.resolve('d.gguf'), scale: -0.1 }],
    });
    for (const bad of ['solver', '=a.gguf', 'solver=', 'solver=@2']) expect(() => parseRoleLoras([bad], 'u'), bad).toThrow(UsageError);
  });

  it('gives the role its own ref role:<name> on the file it would use anyway; other roles are unchanged', () => {
    const cfg = resolveModels(graph, { model: 'base.gguf', roleModel: {}, roleLora: ['solver=s.gguf@0.5'] }, 'u');
    expect(cfg.models).toEqual({ default: path.resolve('base.gguf'), 'role:solver': path.resolve('base.gguf') });
    expect(cfg.roleModels).toEqual({ planner: 'default', solver: 'role:solver', verifier: 'default', answerer: 'default' });
    expect(cfg.loras).toEqual({ 'role:solver': [{ path: path.resolve('s.gguf'), scale: 0.5 }] });
    // with --role-model: the adapter goes on that role's own file
    const both = resolveModels(graph, { model: 'base.gguf', roleModel: { solver: 'other.gguf' }, roleLora: ['solver=s.gguf'] }, 'u');
    expect(both.models['role:solver']).toBe(path.resolve('other.gguf'));
    expect(both.loras).toEqual({ 'role:solver': [{ path: path.resolve('s.gguf') }] });
    // no adapters: no loras key at all (configs stored before this feature look the same)
    expect(resolveModels(graph, { model: 'base.gguf', roleModel: {} }, 'u')).not.toHaveProperty('loras');
    expect(() => resolveModels(graph, { model: 'b.gguf', roleModel: {}, roleLora: ['ghost=s.gguf'] }, 'u')).toThrow(/--role-lora names role "ghost"/);
  });

  it('fingerprints adapters; resuming refuses a changed or missing adapter', () => {
    const dir = tmp();
    const adapter = path.join(dir, 'a.gguf');
    writeFileSync(adapter, 'one');
    const cfg = withFingerprints(resolveModels(graph, { model: tinyModel, roleModel: {}, roleLora: [`solver=${adapter}`] }, 'u'));
    expect(Object.keys(cfg.loraFingerprints!)).toEqual([adapter]);
    expect(() => checkLoraFingerprints(cfg)).not.toThrow();
    writeFileSync(adapter, 'two');
    expect(() => checkLoraFingerprints(cfg)).toThrow(`LoRA adapter of "role:solver" changed since the experiment started: ${adapter}`);
    expect(() => checkLoraFingerprints({ ...cfg, loras: { 'role:solver': [{ path: path.join(dir, 'gone.gguf') }] } })).toThrow(/not found: .*gone\.gguf/);
  });
});
