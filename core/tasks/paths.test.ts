import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveDataDir, resolveSharedDir } from './index.ts';

describe('resolveSharedDir / resolveDataDir', () => {
  const saved = process.env.FLOWLAB_SHARED;
  afterEach(() => {
    if (saved === undefined) delete process.env.FLOWLAB_SHARED;
    else process.env.FLOWLAB_SHARED = saved;
  });

  it('prefers the option, then FLOWLAB_SHARED, then ../shared', () => {
    process.env.FLOWLAB_SHARED = '/env/shared';
    expect(resolveSharedDir({ sharedDir: '/opt/shared' })).toBe(path.resolve('/opt/shared'));
    expect(resolveSharedDir()).toBe(path.resolve('/env/shared'));
    delete process.env.FLOWLAB_SHARED;
    expect(resolveSharedDir()).toBe(path.resolve(process.cwd(), '../shared'));
  });

  it('uses dataDir when given, else <shared>/data', () => {
    expect(resolveDataDir({ dataDir: '/d', sharedDir: '/s' })).toBe(path.resolve('/d'));
    expect(resolveDataDir({ sharedDir: '/s' })).toBe(path.join(path.resolve('/s'), 'data'));
  });
});
