import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { resolveDataDir, resolveSharedDir, userDatasetsDir } from './index.ts';
import { lonelyDir } from '../../test/fixtures.ts';

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

  it('with no shared folder named or found, a user data folder\'s datasets/ (the desktop app, flowlab serve)', () => {
    delete process.env.FLOWLAB_SHARED;
    const cwd = process.cwd();
    // A working directory whose ../shared does not exist.
    const lonely = lonelyDir('paths');
    process.chdir(lonely);
    try {
      expect(resolveDataDir({ userDataDir: '/home/u/.config/Flowlab' })).toBe(path.resolve('/home/u/.config/Flowlab/datasets'));
      expect(userDatasetsDir('/home/u/.config/Flowlab')).toBe(path.resolve('/home/u/.config/Flowlab/datasets'));
      // Without a user data folder: the old default, ../shared/data.
      expect(resolveDataDir()).toBe(path.join(path.dirname(lonely), 'shared', 'data'));
      // A named shared folder still wins.
      process.env.FLOWLAB_SHARED = '/env/shared';
      expect(resolveDataDir({ userDataDir: '/home/u/.config/Flowlab' })).toBe(path.join(path.resolve('/env/shared'), 'data'));
    } finally {
      process.chdir(cwd);
    }
  });

  it('an existing ../shared wins over the user data folder (the development checkout)', () => {
    delete process.env.FLOWLAB_SHARED;
    const hasShared = resolveSharedDir();
    const expected = path.join(hasShared, 'data');
    // The repository's ../shared exists on the development machines; elsewhere this checks the fallback.
    expect(resolveDataDir({ userDataDir: '/u' })).toBe(existsSync(hasShared) ? expected : path.resolve('/u/datasets'));
  });
});
