/**
 * The packaged app's hardening as configured in forge.config.ts: the fuses flipped in the
 * Electron binary (values from Electron's "Fuses" tutorial and @electron/fuses' wire indices).
 */
import { describe, expect, it } from 'vitest';
import config, { FUSE_V1, FUSES } from '../forge.config.ts';

describe('Electron fuses in the Forge config', () => {
  it('are handed to the fuses plugin', () => {
    expect(config.plugins).toEqual([{ name: '@electron-forge/plugin-fuses', config: FUSES }]);
  });

  it('turn RunAsNode, NODE_OPTIONS, --inspect and file:// privileges off; cookie encryption, asar integrity and asar-only on', () => {
    expect(FUSES['version']).toBe('1');
    const set = (i: number) => FUSES[String(i)];
    expect(set(FUSE_V1.RunAsNode)).toBe(false);
    expect(set(FUSE_V1.EnableNodeOptionsEnvironmentVariable)).toBe(false);
    expect(set(FUSE_V1.EnableNodeCliInspectArguments)).toBe(false);
    expect(set(FUSE_V1.GrantFileProtocolExtraPrivileges)).toBe(false);
    expect(set(FUSE_V1.EnableCookieEncryption)).toBe(true);
    expect(set(FUSE_V1.EnableEmbeddedAsarIntegrityValidation)).toBe(true);
    expect(set(FUSE_V1.OnlyLoadAppFromAsar)).toBe(true);
    // The wire indices of @electron/fuses' FuseV1Options.
    expect([FUSE_V1.RunAsNode, FUSE_V1.EnableCookieEncryption, FUSE_V1.OnlyLoadAppFromAsar, FUSE_V1.GrantFileProtocolExtraPrivileges]).toEqual([0, 1, 5, 7]);
  });
});
