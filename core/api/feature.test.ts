import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { thrownBy } from '../../test/fixtures.ts';
import { ApiError } from './errors.ts';
import { defineFeature, labMethod, labOf, methodsModuleText } from './feature.ts';
import { NoPayload } from './fields.ts';

/** A toy feature's interface: one store method, one lab method. */
interface ToyApi {
  /** n + 1. */
  ping(payload: { n: number }): number;
  slow(payload?: Record<string, never>): Promise<string>;
}
interface ToyHost {
  slow?(): string;
}

const toy = defineFeature<ToyApi>()({
  name: 'toy',
  payloads: { ping: z.strictObject({ n: z.int() }), slow: NoPayload },
  lab: ['slow'],
  handlers: (deps: { lab?: ToyHost }) => ({
    ping: ({ n }) => n + 1,
    slow: async () => labMethod(deps, 'slow', 'this host is never slow')(),
  }),
});

describe('defineFeature', () => {
  it('keeps the schemas, the lab methods and the handlers as given', () => {
    expect(Object.keys(toy.payloads)).toEqual(['ping', 'slow']);
    expect(toy.lab).toEqual(['slow']);
    expect(toy.handlers({}).ping({ n: 41 })).toBe(42);
    expect(toy.payloads.ping.safeParse({ n: 1.5 }).success).toBe(false);
  });

  it('checks a definition against its interface at compile time', () => {
    // Each of these fails the type check (tsc runs over the tests); were a check gone, its
    // now unused expect-error directive would fail tsc instead.
    const wrongPayload = defineFeature<ToyApi>()({
      name: 'bad',
      // @ts-expect-error ping's schema yields a string where the interface takes a number
      payloads: { ping: z.strictObject({ n: z.string() }), slow: NoPayload },
      handlers: () => ({ ping: () => 1, slow: async () => 'x' }),
    });
    const extraMethod = defineFeature<ToyApi>()({
      name: 'bad',
      // @ts-expect-error a schema for a method the interface does not have
      payloads: { ping: z.strictObject({ n: z.int() }), slow: NoPayload, pong: NoPayload },
      handlers: () => ({ ping: () => 1, slow: async () => 'x' }),
    });
    const missingMethod = defineFeature<ToyApi>()({
      name: 'bad',
      // @ts-expect-error no schema for slow
      payloads: { ping: z.strictObject({ n: z.int() }) },
      handlers: () => ({ ping: () => 1, slow: async () => 'x' }),
    });
    const wrongResult = defineFeature<ToyApi>()({
      name: 'bad',
      payloads: { ping: z.strictObject({ n: z.int() }), slow: NoPayload },
      // @ts-expect-error ping returns a string where the interface returns a number
      handlers: () => ({ ping: () => 'one', slow: async () => 'x' }),
    });
    expect([wrongPayload, extraMethod, missingMethod, wrongResult].map((f) => f.name)).toEqual(['bad', 'bad', 'bad', 'bad']);
  });
});

describe('the lab host lookups', () => {
  it('answers UNAVAILABLE naming the method without a host, or without the optional method', () => {
    const none = thrownBy(ApiError, () => labOf({}, 'slow'));
    expect([none.code, none.method, none.message]).toEqual(['UNAVAILABLE', 'slow', 'slow: this host cannot run the lab (no lab host); use the desktop app or `flowlab serve`']);
    const partial = thrownBy(ApiError, () => labMethod<ToyHost, 'slow'>({ lab: {} }, 'slow', 'this host is never slow'));
    expect([partial.code, partial.message]).toEqual(['UNAVAILABLE', 'slow: this host is never slow']);
    const host = { speed: 'very', slow() { return this.speed; } };
    expect(labMethod({ lab: host }, 'slow', 'x')()).toBe('very');
  });
});

describe('methodsModuleText', () => {
  it('lists every method in feature order, the lab methods, and the named workshop feature\'s', () => {
    const other = { name: 'other', payloads: { a: NoPayload, b: NoPayload }, lab: ['b'] };
    const text = methodsModuleText([toy, other], 'other');
    expect(text).toContain("export const API_METHODS = [\n  'ping',\n  'slow',\n  'a',\n  'b',\n] as const;");
    expect(text).toContain("export const LAB_METHODS = [\n  'slow',\n  'b',\n] as const;");
    expect(text).toContain("export const WORKSHOP_METHODS = [\n  'a',\n  'b',\n] as const;");
  });
});
