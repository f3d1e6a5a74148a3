/**
 * `searchRuns` (issue 29, "find any run"): the window's Runs table asks the store the question
 * `flowlab ls` asks (core/store/runSearch.ts): filters, full-text search over prompts, completions
 * and outputs, an order and a page, with the total.
 */
import * as z from 'zod';
import { FAILURE_CLASSES, RUN_PAGE_MAX, RUN_SORT_KEYS, RunQueryError, SEARCH_FIELDS, type RunQuery, type RunSearchResult, type Store } from '../../store/index.ts';
import { ApiError } from '../errors.ts';
import { defineFeature } from '../feature.ts';

export type { RunHit, RunQuery, RunSearchResult, RunSortKey, SearchField } from '../../store/index.ts';

const Text = (max: number) => z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
const Ms = z.number().int('must be an integer (epoch ms)').min(0, 'must be at least 0').max(8.64e15, 'must be a date (epoch ms)');

/** `searchRuns`' payload: `RunQuery`, every field optional. */
export const searchRunsSchema = z.strictObject({
  experimentId: Text(200).optional(),
  kind: Text(40).optional(),
  workflow: Text(200).optional(),
  dataset: Text(100).optional(),
  model: Text(200).optional(),
  status: z.enum(['completed', 'failed', 'cancelled']).optional(),
  correct: z.boolean().optional(),
  failureClass: z.enum(FAILURE_CLASSES).optional(),
  blamed: Text(100).optional(),
  group: Text(400).optional(),
  tag: Text(64).optional(),
  since: Ms.optional(),
  until: Ms.optional(),
  text: Text(1000).optional(),
  field: z.enum(SEARCH_FIELDS).optional(),
  sort: z.enum(RUN_SORT_KEYS).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  offset: z.number().int('must be an integer').min(0, 'must be at least 0').max(1e9, 'must be at most 1000000000').optional(),
  limit: z.number().int('must be an integer').min(1, 'must be at least 1').max(RUN_PAGE_MAX, `must be at most ${RUN_PAGE_MAX}`).optional(),
});

/** The run search method (a store read, synchronous on the host). */
export interface RunSearchApi {
  /** Runs matching the filters and search text, one page in the asked order, and the total. Errors: `BAD_REQUEST` (a field, e.g. text with no word). */
  searchRuns(payload: RunQuery): RunSearchResult;
}

export const runSearchFeature = defineFeature<RunSearchApi>()({
  name: 'runSearch',
  payloads: { searchRuns: searchRunsSchema },
  handlers: ({ store }: { store: Store }) => ({ searchRuns: (query) => searchRuns(store, query) }),
});

/** The handler: the store's search, its `BAD_QUERY` as `BAD_REQUEST` naming the field. */
export function searchRuns(store: Store, q: RunQuery): RunSearchResult {
  try {
    return store.searchRuns(q);
  } catch (err) {
    if (err instanceof RunQueryError) throw new ApiError('BAD_REQUEST', `searchRuns: ${err.message}`, 'searchRuns', err.location.field, { cause: err });
    throw err;
  }
}
