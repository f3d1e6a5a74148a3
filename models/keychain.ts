/**
 * API keys from the OS keychain, read by the platform's own tool (run with `execFile`, never a
 * shell; the entry's names go in as separate arguments or, for PowerShell, as environment
 * variables, so no name can become code):
 *
 * | platform | lookup | store (asks for the key) |
 * |----------|--------|--------------------------|
 * | macOS | `security find-generic-password -s <service> -a <account> -w` | `security add-generic-password -U -s <service> -a <account> -w` |
 * | Linux (libsecret: GNOME Keyring, KWallet's Secret Service) | `secret-tool lookup service <service> account <account>` | `secret-tool store --label='Flowlab <service>' service <service> account <account>` |
 * | Windows (PasswordVault, the Credential Manager's web credentials) | PowerShell `PasswordVault.Retrieve(<service>, <account>)` | PowerShell `PasswordVault.Add(PasswordCredential(<service>, <account>, <key>))` (the full line is in {@link storeCommand}) |
 *
 * A key is read once per process per entry and kept in memory only (a failed read is not kept,
 * so storing the entry and calling again works). Errors: {@link KeychainError}.
 */
import { execFile } from 'node:child_process';
import { FlowlabError } from '../core/errors.ts';
import type { KeychainEntry } from '../core/model/index.ts';

export type KeychainErrorCode = 'KEYCHAIN_TOOL_MISSING' | 'KEYCHAIN_ENTRY_MISSING' | 'KEYCHAIN_TIMEOUT' | 'KEYCHAIN_UNSUPPORTED';

/** A key that cannot be read; the message names the tool, the entry and the command that stores it. */
export class KeychainError extends FlowlabError<KeychainErrorCode> {
  override readonly name = 'KeychainError';
}

/** Options of {@link keychainSecret}. */
export interface KeychainOptions {
  /** The environment the tool runs with (its `PATH` finds it); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /** How long the tool may take, ms (default 10,000: a locked keychain may wait for its password). */
  timeoutMs?: number;
}

const cache = new Map<string, Promise<string>>();

/** Forgets the keys read so far (tests; a long-lived process whose keys were rotated). */
export function clearKeychainCache(): void {
  cache.clear();
}

const WINDOWS_LOOKUP =
  '$ErrorActionPreference = "Stop"; [void][Windows.Security.Credentials.PasswordVault, Windows.Security.Credentials, ContentType = WindowsRuntime]; ' +
  '$c = (New-Object Windows.Security.Credentials.PasswordVault).Retrieve($env:FLOWLAB_KEYCHAIN_SERVICE, $env:FLOWLAB_KEYCHAIN_ACCOUNT); $c.RetrievePassword(); [Console]::Out.Write($c.Password)';

/** The tool, its arguments and its extra environment that look `entry` up on `platform`. */
export function lookupCommand(entry: KeychainEntry, platform: NodeJS.Platform): { tool: string; args: string[]; env: Record<string, string> } {
  switch (platform) {
    case 'darwin':
      return { tool: 'security', args: ['find-generic-password', '-s', entry.service, '-a', entry.account, '-w'], env: {} };
    case 'win32':
      return { tool: 'powershell.exe', args: ['-NoProfile', '-NonInteractive', '-Command', WINDOWS_LOOKUP], env: { FLOWLAB_KEYCHAIN_SERVICE: entry.service, FLOWLAB_KEYCHAIN_ACCOUNT: entry.account } };
    default:
      return { tool: 'secret-tool', args: ['lookup', 'service', entry.service, 'account', entry.account], env: {} };
  }
}

/** The command a person runs to store `entry` on `platform` (it asks for the key, except on Windows where `<key>` is replaced). */
export function storeCommand(entry: KeychainEntry, platform: NodeJS.Platform): string {
  const q = (s: string) => `'${s.replace(/'/g, platform === 'win32' ? "''" : "'\\''")}'`;
  switch (platform) {
    case 'darwin':
      return `security add-generic-password -U -s ${q(entry.service)} -a ${q(entry.account)} -w`;
    case 'win32':
      return `powershell -NoProfile -Command "[void][Windows.Security.Credentials.PasswordVault, Windows.Security.Credentials, ContentType = WindowsRuntime]; (New-Object Windows.Security.Credentials.PasswordVault).Add((New-Object Windows.Security.Credentials.PasswordCredential(${q(entry.service)}, ${q(entry.account)}, '<key>')))"`;
    default:
      return `secret-tool store --label=${q(`Flowlab ${entry.service}`)} service ${q(entry.service)} account ${q(entry.account)}`;
  }
}

const INSTALL: Partial<Record<NodeJS.Platform, string>> = {
  linux: 'install libsecret-tools (Debian/Ubuntu: apt install libsecret-tools; Fedora: dnf install libsecret)',
  darwin: 'it ships with macOS in /usr/bin',
  win32: 'Windows PowerShell ships with Windows',
};

/**
 * The key stored in `entry` (its text without a trailing line break), read once per process.
 * @throws KeychainError `KEYCHAIN_TOOL_MISSING` (the tool is not on PATH: names it and how to
 *   install it), `KEYCHAIN_ENTRY_MISSING` (the tool found no entry, or an empty one: names the
 *   lookup and the command that stores it), `KEYCHAIN_TIMEOUT`, `KEYCHAIN_UNSUPPORTED` (a
 *   platform with none of the three tools).
 */
export function keychainSecret(entry: KeychainEntry, options: KeychainOptions = {}): Promise<string> {
  const platform = options.platform ?? process.platform;
  const id = `${platform}\0${entry.service}\0${entry.account}`;
  let pending = cache.get(id);
  if (!pending) {
    pending = readEntry(entry, platform, options);
    cache.set(id, pending);
    pending.catch(() => cache.delete(id));
  }
  return pending;
}

function readEntry(entry: KeychainEntry, platform: NodeJS.Platform, options: KeychainOptions): Promise<string> {
  const name = `${entry.service}/${entry.account}`;
  if (!['darwin', 'win32', 'linux', 'freebsd', 'openbsd'].includes(platform)) {
    return Promise.reject(new KeychainError('KEYCHAIN_UNSUPPORTED', `no keychain tool is known on ${platform} (keychain entry ${name}): name the key by &key=<ENV> instead`));
  }
  const { tool, args, env } = lookupCommand(entry, platform);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const shown = platform === 'win32' ? `${tool} (PasswordVault.Retrieve)` : [tool, ...args].join(' ');
  const store = storeCommand(entry, platform);
  return new Promise((resolve, reject) => {
    execFile(tool, args, { env: { ...(options.env ?? process.env), ...env }, timeout: timeoutMs, windowsHide: true, maxBuffer: 64 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      const key = stdout.replace(/\r?\n$/, '');
      if (!err && key !== '') return resolve(key);
      const e = err as (NodeJS.ErrnoException & { killed?: boolean }) | null;
      if (e?.code === 'ENOENT') {
        return reject(new KeychainError('KEYCHAIN_TOOL_MISSING', `the keychain tool \`${tool}\` is not on PATH (${INSTALL[platform] ?? 'install libsecret-tools'}), so keychain entry ${name} cannot be read; or name the key by &key=<ENV>`, {}, { cause: err }));
      }
      if (e?.killed) {
        return reject(new KeychainError('KEYCHAIN_TIMEOUT', `\`${shown}\` did not answer within ${timeoutMs / 1000} s (a locked keychain waiting for its password?)`, {}, { cause: err }));
      }
      const said = stderr.trim().split('\n')[0]?.slice(0, 200);
      const how = `${e ? `exited ${String(e.code)}` : 'printed nothing'}${said ? `: ${said}` : ''}`;
      reject(new KeychainError('KEYCHAIN_ENTRY_MISSING', `no key in keychain entry service "${entry.service}" account "${entry.account}" (\`${shown}\` ${how}); store it with: ${store}`, {}, err ? { cause: err } : undefined));
    });
  });
}
