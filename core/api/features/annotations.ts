/**
 * Annotations (issue 29, "a person can score or tag a run and a node"): the window's Trace view
 * adds, lists and removes them, as `flowlab annotate` and `flowlab annotations` do
 * (core/store/annotations.ts holds the rows and their validation). Store reads and writes,
 * synchronous on the host.
 */
import * as z from 'zod';
import { newAnnotationSchema, type Annotation, type AnnotationQuery, type NewAnnotation, type Store } from '../../store/index.ts';
import { defineFeature } from '../feature.ts';
import { Id, NoPayload } from '../fields.ts';

export type { Annotation, AnnotationQuery, NewAnnotation } from '../../store/index.ts';

/** `listAnnotations`' payload: a run, an experiment or a tag (at least one), optionally one node of the run. */
export const listAnnotationsSchema = z
  .strictObject({
    runId: Id.optional(),
    experimentId: Id.optional(),
    nodeId: Id.nullable().optional(),
    tag: Id.optional(),
  })
  .refine((q) => q.runId !== undefined || q.experimentId !== undefined || q.tag !== undefined, { message: 'give runId, experimentId or tag', path: ['runId'] })
  .refine((q) => q.nodeId === undefined || q.runId !== undefined, { message: 'nodeId needs runId', path: ['nodeId'] });

/** The annotation methods. */
export interface AnnotationsApi {
  /**
   * Stores a person's score, tags and note on a run (or on one node of it: `nodeId`) and returns
   * it as stored. Errors: `BAD_REQUEST` naming the field (no score, tag or note; a tag with a space;
   * a score that is not a finite number), `NOT_FOUND` (no such run, or no such node in it).
   */
  addAnnotation(payload: NewAnnotation): Annotation;
  /** The annotations of a run, an experiment or a tag, oldest first. */
  listAnnotations(payload: AnnotationQuery): Annotation[];
  /** Removes one annotation. Errors: `NOT_FOUND`. */
  removeAnnotation(payload: { id: string }): { removed: string };
  /** The tags in use, with the number of runs carrying each, most used first (the Runs table's tag filter). */
  listAnnotationTags(payload?: Record<string, never>): Array<{ tag: string; runs: number }>;
}

export const annotationsFeature = defineFeature<AnnotationsApi>()({
  name: 'annotations',
  payloads: {
    addAnnotation: newAnnotationSchema,
    listAnnotations: listAnnotationsSchema,
    removeAnnotation: z.strictObject({ id: Id }),
    listAnnotationTags: NoPayload,
  },
  handlers: ({ store }: { store: Store }) => ({
    addAnnotation: (payload) => store.annotations.add(payload),
    listAnnotations: (q) => store.annotations.list(q),
    removeAnnotation: ({ id }) => {
      store.annotations.get(id); // NOT_FOUND names it
      store.annotations.remove(id);
      return { removed: id };
    },
    listAnnotationTags: () => store.annotations.tags(),
  }),
});
