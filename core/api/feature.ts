/**
 * One API feature in one module (Actual Budget's per-feature `app.ts`, STYLE.md 17): the
 * feature's method interface (payload -> result, with its docs), one zod schema per method's
 * payload, which methods the lab host answers, and the handlers over core. `features/index.ts`
 * lists the features; the method list, the allowlist the hosts check, the typed client and the
 * Electron relay are derived from that list (`FlowlabApi` in contract.ts, `createHandlers` in
 * handlers.ts, the generated methods.ts).
 */
import type * as z from 'zod';
import { ApiError } from './errors.ts';

/** A value or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/** An API interface: every member a method taking at most one payload. */
export type MethodsShape<Api> = { [M in keyof Api]: (payload: never) => unknown };

/** The payload a method takes (`undefined` included when it is optional). */
export type PayloadOf<F> = F extends (...args: infer A) => unknown ? A[0] : never;

/** What a method returns (a Promise for the lab methods). */
export type ResultOf<F> = F extends (...args: never[]) => infer R ? R : never;

/** One zod schema per method; its output must be the payload the interface declares. */
export type PayloadSchemas<Api> = { [M in keyof Api]: z.ZodType<PayloadOf<Api[M]>> };

/** The handlers of a feature: each takes its validated payload and returns the declared result. */
export type FeatureHandlers<Api, P extends PayloadSchemas<Api>> = { [M in keyof Api]: (payload: z.output<P[M]>) => ResultOf<Api[M]> };

/**
 * A feature: `payloads` (one schema per method, in the order the methods are listed), `lab` (the
 * methods answered by the lab host: asynchronous on every host, relayed to Electron's utility
 * process), `handlers` (built once per `createHandlers` from what the feature needs of its
 * `HandlerDeps`). `api` is never set: it carries the method interface for the type checker.
 */
export interface Feature<Api, P extends PayloadSchemas<Api> = PayloadSchemas<Api>, Deps = never> {
  readonly name: string;
  readonly payloads: P;
  readonly lab: readonly (keyof Api & string)[];
  readonly handlers: (deps: Deps) => FeatureHandlers<Api, P>;
  readonly api?: Api;
}

/**
 * Defines a feature for the method interface `Api` (given explicitly; the definition is checked
 * against it: a schema and a handler for every method and no other, each schema's output the
 * declared payload, each handler's result the declared result):
 *
 *     export const cardsFeature = defineFeature<CardsApi>()({ name: 'cards', payloads: {...}, handlers: (deps: {...}) => ({...}) });
 */
export function defineFeature<Api extends MethodsShape<Api>>() {
  return <P extends PayloadSchemas<Api>, Deps>(def: {
    name: string;
    payloads: P & Record<Exclude<keyof P, keyof Api>, never>;
    lab?: readonly (keyof Api & string)[];
    handlers: (deps: Deps) => FeatureHandlers<Api, P>;
  }): Feature<Api, P, Deps> => ({ name: def.name, payloads: def.payloads, lab: def.lab ?? [], handlers: def.handlers });
}

/** What methods.ts is written from: a feature's name, its methods (the payloads' keys) and its lab methods. */
export interface FeatureNames {
  readonly name: string;
  readonly payloads: object;
  readonly lab: readonly string[];
}

/** The method interface of a feature. */
export type ApiOf<F> = F extends Feature<infer A, infer _P, infer _D> ? A : never;
/** The payload schemas of a feature. */
export type SchemasOf<F> = F extends Feature<infer _A, infer P, infer _D> ? P : never;
/** `A | B` -> `A & B`. */
export type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/**
 * The lab host of a feature's deps, or `UNAVAILABLE` naming the method when the host has none
 * (a store-only host: the tests, `flowlab workshop`).
 */
export function labOf<H>(deps: { lab?: H | undefined }, method: string): H {
  if (!deps.lab) throw new ApiError('UNAVAILABLE', `${method}: this host cannot run the lab (no lab host); use the desktop app or \`flowlab serve\``, method);
  return deps.lab;
}

/**
 * A lab host's optional method, bound to the host, or `UNAVAILABLE` with `${method}: ${why}` when
 * this host does not implement it (a host without models, trainer or workflows folder).
 */
export function labMethod<H, M extends keyof H & string>(deps: { lab?: H | undefined }, method: M, why: string): NonNullable<H[M]> {
  const host = labOf(deps, method);
  const f = host[method];
  if (typeof f !== 'function') throw new ApiError('UNAVAILABLE', `${method}: ${why}`, method);
  return f.bind(host) as NonNullable<H[M]>;
}

/**
 * The text of methods.ts, the zod-free method list the sandboxed preload and the renderer's
 * client bundle: every method in feature order, the lab methods, the workshop methods.
 * `scripts/write-api-methods.ts` writes it; core/api/methods.test.ts checks it is current.
 */
export function methodsModuleText(features: readonly FeatureNames[], workshopFeature: string): string {
  const list = (names: readonly string[]) => `[\n${names.map((n) => `  '${n}',\n`).join('')}] as const`;
  const all = features.flatMap((f) => Object.keys(f.payloads));
  const lab = features.flatMap((f) => f.lab);
  const workshop = features.filter((f) => f.name === workshopFeature).flatMap((f) => Object.keys(f.payloads));
  return [
    '/**',
    ' * The API\'s method names, derived from the features (core/api/features/index.ts) by',
    ' * `npm run api:methods`; core/api/methods.test.ts fails when this file is stale. Imports nothing,',
    ' * so the sandboxed preload and the renderer bundle it without zod, the store or Node. Do not edit.',
    ' */',
    '',
    '/** Every method of `FlowlabApi`, in feature order. Hosts expose these and nothing else. */',
    `export const API_METHODS = ${list(all)};`,
    '',
    '/** The methods a `LabHost` answers (asynchronous on every host; Electron relays them to its utility process). */',
    `export const LAB_METHODS = ${list(lab)};`,
    '',
    '/** The workshop methods (answered only by a workshop server: `flowlab workshop`). */',
    `export const WORKSHOP_METHODS = ${list(workshop)};`,
    '',
  ].join('\n');
}
