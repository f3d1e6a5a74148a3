/**
 * The desktop app's update check, which a user can turn off. No Electron import (main passes
 * its paths and shows the answer), so tests run it against a loopback server.
 *
 * What it does: once per start, a GET of the update feed (`FLOWLAB_UPDATE_FEED`, else package.json
 * `flowlab.updateFeed`; no feed configured: no request at all), a JSON document
 * `{ "version": "0.2.0", "url": "https://…/releases/0.2.0" }`; when `version` is newer than the
 * running one (numeric semver order of major.minor.patch; a pre-release tag sorts before its
 * release), main offers to open `url` (https only) or to stop checking. Nothing is downloaded or
 * installed. Off: `FLOWLAB_UPDATE_CHECK=0`, or `{"updateCheck": false}` in `<userData>/settings.json`
 * (what "Don't check again" writes, temp file + rename).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../core/errors.ts';

/** What the feed says when a newer version exists. */
export interface UpdateOffer {
  version: string;
  url: string;
}

/** Why no request was made, or what it found. */
export type UpdateCheckResult = { kind: 'off'; why: string } | { kind: 'current'; latest: string } | { kind: 'newer'; offer: UpdateOffer } | { kind: 'failed'; message: string };

/** -1, 0 or 1: semver precedence of `a` against `b` over major.minor.patch and the pre-release tag (SemVer 2.0.0 section 11, simplified: tags compared as strings). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?/.exec(v.trim());
    if (!m) throw new Error(`not a version: "${v}"`);
    return { n: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.n[i] !== y.n[i]) return x.n[i]! < y.n[i]! ? -1 : 1;
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/** The settings file under the user data folder. */
export function settingsFile(userDataDir: string): string {
  return path.join(userDataDir, 'settings.json');
}

/** Whether the user turned the check off (`settings.json` `updateCheck: false`). An unreadable file counts as on. */
export function updateCheckDisabled(userDataDir: string): boolean {
  try {
    return (JSON.parse(readFileSync(settingsFile(userDataDir), 'utf8')) as { updateCheck?: unknown }).updateCheck === false;
  } catch {
    return false;
  }
}

/** Turns the check on or off in `settings.json`, keeping its other keys (temp file + rename). */
export function setUpdateCheck(userDataDir: string, on: boolean): void {
  const file = settingsFile(userDataDir);
  let settings: Record<string, unknown> = {};
  try {
    if (existsSync(file)) settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    settings = {};
  }
  settings['updateCheck'] = on;
  mkdirSync(userDataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`);
  renameSync(tmp, file);
}

/** Options of {@link checkForUpdate}. */
export interface UpdateCheckOptions {
  /** The running version (package.json `version`). */
  current: string;
  /** The feed URL, or undefined when none is configured. */
  feed: string | undefined;
  userDataDir: string;
  env?: Record<string, string | undefined>;
  /** Milliseconds before the request is abandoned. Default 5000. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Runs the check (never throws: a failure is `{kind: 'failed'}` with the URL and the reason). */
export async function checkForUpdate(o: UpdateCheckOptions): Promise<UpdateCheckResult> {
  const env = o.env ?? process.env;
  if (env['FLOWLAB_UPDATE_CHECK'] === '0') return { kind: 'off', why: 'FLOWLAB_UPDATE_CHECK=0' };
  if (updateCheckDisabled(o.userDataDir)) return { kind: 'off', why: `turned off in ${settingsFile(o.userDataDir)}` };
  const feed = env['FLOWLAB_UPDATE_FEED'] || o.feed;
  if (!feed) return { kind: 'off', why: 'no update feed configured' };
  try {
    const res = await (o.fetch ?? fetch)(feed, { signal: AbortSignal.timeout(o.timeoutMs ?? 5000), headers: { accept: 'application/json' } });
    if (!res.ok) return { kind: 'failed', message: `${feed} answered HTTP ${res.status}` };
    const doc = (await res.json()) as { version?: unknown; url?: unknown };
    if (typeof doc.version !== 'string') return { kind: 'failed', message: `${feed}: "version" is missing or not a string` };
    if (compareVersions(doc.version, o.current) <= 0) return { kind: 'current', latest: doc.version };
    if (typeof doc.url !== 'string' || !/^https:\/\//.test(doc.url)) return { kind: 'failed', message: `${feed}: "url" must be an https URL` };
    return { kind: 'newer', offer: { version: doc.version, url: doc.url } };
  } catch (err) {
    return { kind: 'failed', message: `${feed}: ${errorMessage(err)}` };
  }
}
