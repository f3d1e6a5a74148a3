/**
 * API keys from the OS keychain with fake platform tools (small shell scripts first on PATH in a
 * temp dir): the key read by `secret-tool` (and macOS `security`), once per process, sent as the
 * bearer header of an endpoint reference naming the entry; the errors for a missing tool, a
 * missing entry and a tool that hangs, each naming the tool, the entry and how to store it.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRoleName } from '../core/ids.ts';
import { EndpointRefError, parseEndpointRef } from '../core/model/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { clearKeychainCache, keychainSecret, lookupCommand, storeCommand } from './keychain.ts';
import { OpenAiProvider } from './openai/index.ts';

const KEY = `sk-keychain-test-${process.pid}`;
const skip = process.platform === 'win32' ? 'the fake tools are POSIX shell scripts' : false;

/** A folder holding a fake `name` that logs each call's arguments to `calls.log` and runs `body`. */
function fakeTool(name: string, body: string): { dir: string; calls: () => string[] } {
  const dir = tempDir('keychain');
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const log = path.join(dir, 'calls.log');
  writeFileSync(path.join(bin, name), `#!/bin/sh\necho "$*" >> '${log}'\n${body}\n`);
  chmodSync(path.join(bin, name), 0o755);
  return { dir: bin, calls: () => readFileSync(log, 'utf8').trim().split('\n') };
}
const onPath = (dir: string) => ({ ...process.env, PATH: `${dir}:/usr/bin:/bin` });
// secret-tool prints the secret without a line break; `security -w` prints one.
const SECRET_TOOL = `[ "$*" = "lookup service flowlab-test account me" ] && { printf '%s' '${KEY}'; exit 0; }\nexit 1`;

beforeEach(clearKeychainCache);

describe.skipIf(skip)('keychainSecret', () => {
  it('reads the key with secret-tool lookup (Linux), once per process per entry', async () => {
    const tool = fakeTool('secret-tool', SECRET_TOOL);
    const entry = { service: 'flowlab-test', account: 'me' };
    expect(await keychainSecret(entry, { env: onPath(tool.dir), platform: 'linux' })).toBe(KEY);
    expect(await keychainSecret(entry, { env: onPath(tool.dir), platform: 'linux' })).toBe(KEY);
    expect(tool.calls()).toEqual(['lookup service flowlab-test account me']);
  });

  it('reads it with security find-generic-password -w on macOS (its line break dropped)', async () => {
    const tool = fakeTool('security', `[ "$*" = "find-generic-password -s flowlab-test -a me -w" ] && { echo '${KEY}'; exit 0; }\nexit 44`);
    expect(await keychainSecret({ service: 'flowlab-test', account: 'me' }, { env: onPath(tool.dir), platform: 'darwin' })).toBe(KEY);
  });

  it('a missing tool names it and how to install it; a missing entry names the lookup and the command that stores it', async () => {
    const empty = tempDir('keychain-empty');
    await expect(keychainSecret({ service: 'flowlab-test', account: 'me' }, { env: { PATH: empty }, platform: 'linux' })).rejects.toMatchObject({
      code: 'KEYCHAIN_TOOL_MISSING',
      message: expect.stringMatching(/`secret-tool` is not on PATH \(install libsecret-tools.*keychain entry flowlab-test\/me/),
    });
    const tool = fakeTool('secret-tool', `echo 'No such secret' >&2\n${SECRET_TOOL}`);
    const err = (await keychainSecret({ service: 'flowlab-test', account: 'other' }, { env: onPath(tool.dir), platform: 'linux' }).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ code: 'KEYCHAIN_ENTRY_MISSING' });
    expect((err as Error).message).toBe(
      "no key in keychain entry service \"flowlab-test\" account \"other\" (`secret-tool lookup service flowlab-test account other` exited 1: No such secret); store it with: secret-tool store --label='Flowlab flowlab-test' service 'flowlab-test' account 'other'",
    );
    // A failed read is not kept: once stored, the next call finds it.
    expect(await keychainSecret({ service: 'flowlab-test', account: 'me' }, { env: onPath(tool.dir), platform: 'linux' })).toBe(KEY);
  });

  it('a tool that hangs times out; an unknown platform is refused', async () => {
    const tool = fakeTool('secret-tool', 'sleep 5');
    await expect(keychainSecret({ service: 's', account: 'a' }, { env: onPath(tool.dir), platform: 'linux', timeoutMs: 300 })).rejects.toMatchObject({ code: 'KEYCHAIN_TIMEOUT' });
    await expect(keychainSecret({ service: 's', account: 'a' }, { platform: 'aix' })).rejects.toMatchObject({ code: 'KEYCHAIN_UNSUPPORTED' });
  });

  it('names go in as arguments (or, for PowerShell, environment variables), never into a shell or a script', () => {
    const entry = { service: "svc'; rm -rf ~", account: '$(id)' };
    expect(lookupCommand(entry, 'linux').args).toEqual(['lookup', 'service', entry.service, 'account', entry.account]);
    const win = lookupCommand(entry, 'win32');
    expect(win.tool).toBe('powershell.exe');
    expect(win.args.join(' ')).not.toContain('rm -rf');
    expect(win.env).toEqual({ FLOWLAB_KEYCHAIN_SERVICE: entry.service, FLOWLAB_KEYCHAIN_ACCOUNT: entry.account });
    expect(storeCommand({ service: 'openai', account: 'me' }, 'darwin')).toBe("security add-generic-password -U -s 'openai' -a 'me' -w");
  });
});

describe('endpoint references name a keychain entry', () => {
  it('parses &keychain=<service>/<account> (%XX decoded) and refuses a bad entry or one given with key=', () => {
    expect(parseEndpointRef('openai:http://h:1/v1#m&keychain=openai/me%40work')[0]!.keychain).toEqual({ service: 'openai', account: 'me@work' });
    for (const ref of ['openai:http://h:1/v1#m&keychain=noslash', 'openai:http://h:1/v1#m&keychain=a/b c', 'openai:http://h:1/v1#m&key=K&keychain=a/b', 'openai:http://h:1/v1#m&keychain=a/%E0']) {
      expect(() => parseEndpointRef(ref), ref).toThrow(EndpointRefError);
    }
  });
});

describe.skipIf(process.platform !== 'linux')('an endpoint with &keychain= sends the key as its bearer header (Linux: secret-tool)', () => {
  const closers: Array<() => void> = [];
  afterEach(() => closers.splice(0).forEach((c) => c()));

  it('reads the entry through secret-tool and sends it; a refused key names the entry, never the key', async () => {
    const auth: Array<string | undefined> = [];
    const server = createServer((req, res) => {
      auth.push(req.headers.authorization);
      req.resume();
      req.on('end', () => {
        const ok = req.headers.authorization === `Bearer ${KEY}` && auth.length === 1;
        res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(ok ? { choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }] } : { error: { message: 'bad key' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => server.close());
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const tool = fakeTool('secret-tool', SECRET_TOOL);
    const p = new OpenAiProvider({ models: { m: parseEndpointRef(`openai:${base}#tiny&keychain=flowlab-test/me&retries=0`) }, env: onPath(tool.dir) });
    const call = { role: asRoleName('w'), model: 'm', prompt: 'x', params: { temperature: 0, maxTokens: 4 }, seed: 1, key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 } };
    expect((await p.generate(call)).text).toBe('hi');
    expect(auth).toEqual([`Bearer ${KEY}`]);
    const refused = (await p.generate(call).catch((e: unknown) => e)) as Error;
    expect(refused.message).toMatch(/refused the request \(401\): check the key in the keychain entry flowlab-test\/me/);
    expect(refused.message).not.toContain(KEY);
    expect(tool.calls()).toHaveLength(1); // read once for both calls
  });
});
