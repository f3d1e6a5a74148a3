import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultVersionsDir } from '../cli/wiring.ts';
import { openStore } from '../core/store/index.ts';
import { besideDatabase, defaultDatabase, isPrivateDatabase, userDataFolder } from './dataFolder.ts';
import { LabRunner } from './runner.ts';

describe("the user's data folder (the lab wrote its folders into the current folder)", () => {
  it('is FLOWLAB_DATA, else the XDG data home, else the platform default', () => {
    expect(userDataFolder({ env: { FLOWLAB_DATA: '/srv/lab' }, platform: 'linux', home: '/home/ada' })).toBe('/srv/lab');
    expect(userDataFolder({ env: { XDG_DATA_HOME: '/x/data' }, platform: 'linux', home: '/home/ada' })).toBe('/x/data/flowlab');
    expect(userDataFolder({ env: { XDG_DATA_HOME: 'relative' }, platform: 'linux', home: '/home/ada' })).toBe('/home/ada/.local/share/flowlab');
    expect(userDataFolder({ env: {}, platform: 'linux', home: '/home/ada' })).toBe('/home/ada/.local/share/flowlab');
    expect(userDataFolder({ env: {}, platform: 'darwin', home: '/Users/ada' })).toBe('/Users/ada/Library/Application Support/flowlab');
    expect(userDataFolder({ env: { APPDATA: 'C:\\Users\\ada\\AppData\\Roaming' }, platform: 'win32', home: 'C:\\Users\\ada' })).toBe('C:\\Users\\ada\\AppData\\Roaming\\flowlab');
  });

  it('holds the default database unless FLOWLAB_DB names one', () => {
    expect(defaultDatabase({ env: {}, platform: 'linux', home: '/home/ada' })).toBe('/home/ada/.local/share/flowlab/flowlab.db');
    expect(defaultDatabase({ env: { FLOWLAB_DB: 'mine.db' }, platform: 'linux', home: '/home/ada' })).toBe('mine.db');
  });
});

describe('the folders beside the database (one helper for the CLI and the lab host)', () => {
  it("are in the database file's folder; a private database (`:memory:`, '') has the system's temporary folder instead", () => {
    expect(besideDatabase('/srv/lab/flowlab.db', ['flowlab-versions'])).toBe('/srv/lab/flowlab-versions');
    expect(besideDatabase('/srv/lab/flowlab.db', ['flowlab-studies', 'study-1'])).toBe('/srv/lab/flowlab-studies/study-1');
    expect(besideDatabase('/srv/lab/flowlab.db')).toBe('/srv/lab');
    expect(besideDatabase('lab.db', ['flowlab-mass'])).toBe(path.join(process.cwd(), 'flowlab-mass'));
    expect(besideDatabase(':memory:', ['flowlab-workflows'])).toBe(path.join(tmpdir(), 'flowlab-workflows'));
    expect(besideDatabase('', ['flowlab-versions'])).toBe(path.join(tmpdir(), 'flowlab-versions'));
    expect([':memory:', '', 'lab.db', '/srv/lab/flowlab.db'].map(isPrivateDatabase)).toEqual([true, true, false, false]);
  });

  it('are the same for the CLI and the lab host (the CLI put a private database\'s versions in its working folder, the host in the temporary folder)', () => {
    const mem = openStore(':memory:');
    try {
      expect(defaultVersionsDir(mem)).toBe(path.join(tmpdir(), 'flowlab-versions'));
      expect(defaultVersionsDir(mem)).toBe(LabRunner.versionsDirOf(mem));
      expect(defaultVersionsDir(mem)).not.toBe(path.join(process.cwd(), 'flowlab-versions'));
    } finally {
      mem.close();
    }
  });
});
