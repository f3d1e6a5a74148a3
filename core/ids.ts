/**
 * Branded identifiers (as node-llama-cpp's `Token = number & {__token: never}`): a `RunId` cannot be passed where a `NodeId` is expected.
 * Brands exist only at compile time; at run time every id is a plain string.
 */
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type ExperimentId = Brand<string, 'ExperimentId'>;
export type RunId = Brand<string, 'RunId'>;
export type NodeId = Brand<string, 'NodeId'>;
export type RoleName = Brand<string, 'RoleName'>;

export const asExperimentId = (s: string) => s as ExperimentId;
export const asRunId = (s: string) => s as RunId;
export const asNodeId = (s: string) => s as NodeId;
export const asRoleName = (s: string) => s as RoleName;

/** The author of hand-written wiring: a person, not a trainable role. */
export const HUMAN = 'human' as RoleName;
