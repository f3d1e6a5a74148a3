/**
 * The playground feature (the Models view's playground; core/api/playground.ts has the types and
 * the event guard): `startGeneration` streams one generation with one model (a local GGUF file or
 * an OpenAI-compatible endpoint) as `PlaygroundEvent`s, `cancelGeneration` stops it. Lab methods:
 * the host loads the model (host/playground.ts). Every payload is bounded here: the texts, the
 * schema's size, the completion tokens (at most MAX_PLAYGROUND_TOKENS) and each sampling value.
 */
import * as z from 'zod';
import { MAX_NESTING_DEPTH, nestingDepth } from '../../limits.ts';
import { defineFeature, labMethod } from '../feature.ts';
import { Count, Id, MAX_PATH_LENGTH } from '../fields.ts';
import {
  MAX_PLAYGROUND_SCHEMA_CHARS, MAX_PLAYGROUND_TEXT, MAX_PLAYGROUND_TOKENS,
  type CancelGenerationPayload, type PlaygroundApi, type PlaygroundHost, type StartGenerationRequest,
} from '../playground.ts';

/** A model: an absolute `.gguf` path (POSIX, Windows drive or UNC) or an `openai:` endpoint reference. */
const PlaygroundModel = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`)
  .refine((p) => !p.includes('\0'), 'must not contain a NUL character')
  .refine((p) => p.startsWith('openai:') || (/^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p) && /\.gguf$/i.test(p)), 'must be an absolute path of a .gguf file or an endpoint reference openai:<base-url>#<model>');

const Text = z.string().max(MAX_PLAYGROUND_TEXT, `must be at most ${MAX_PLAYGROUND_TEXT} characters`);
const Unit = z.number('must be a number from 0 to 1').min(0, 'must be at least 0').max(1, 'must be at most 1');

/**
 * A JSON schema: an object nested at most MAX_NESTING_DEPTH levels (measured without recursion,
 * first: `JSON.stringify` of a few thousand levels overflows the stack) whose JSON text is at most
 * MAX_PLAYGROUND_SCHEMA_CHARS characters.
 */
const JsonSchemaObject = z.looseObject({}).superRefine((s, ctx) => {
  if (nestingDepth(s) > MAX_NESTING_DEPTH) ctx.addIssue({ code: 'custom', message: `is nested deeper than ${MAX_NESTING_DEPTH} levels` });
  else if (JSON.stringify(s).length > MAX_PLAYGROUND_SCHEMA_CHARS) ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_PLAYGROUND_SCHEMA_CHARS} characters of JSON` });
});

/** `startGeneration`'s payload schema (exported for its tests). */
export const startGenerationSchema: z.ZodType<StartGenerationRequest> = z.strictObject({
  model: PlaygroundModel,
  prompt: Text.min(1, 'must not be empty'),
  system: Text.optional(),
  temperature: z.number('must be a number from 0 to 5').min(0, 'must be at least 0').max(5, 'must be at most 5').optional(),
  topK: Count(0, 1000).optional(),
  topP: Unit.optional(),
  minP: Unit.optional(),
  seed: Count(0, 2 ** 32 - 1).optional(),
  maxTokens: Count(1, MAX_PLAYGROUND_TOKENS),
  jsonSchema: JsonSchemaObject.optional(),
  threads: Count(1, 256).optional(),
});

export const playgroundFeature = defineFeature<PlaygroundApi>()({
  name: 'playground',
  payloads: {
    startGeneration: startGenerationSchema,
    cancelGeneration: z.strictObject({ generationId: Id }) satisfies z.ZodType<CancelGenerationPayload>,
  },
  lab: ['startGeneration', 'cancelGeneration'],
  handlers: (deps: { lab?: PlaygroundHost | undefined }) => ({
    startGeneration: async (payload) => labMethod(deps, 'startGeneration', 'this host has no playground (it cannot load models)')(payload),
    cancelGeneration: async (payload) => labMethod(deps, 'cancelGeneration', 'this host has no playground (it cannot load models)')(payload),
  }),
});
