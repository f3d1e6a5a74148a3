/**
 * The annotation form's pure parts (views/AnnotationsPanel.tsx): its fields as `addAnnotation`'s
 * payload, and one annotation as a line. The payload's validation is the API's (core/store
 * annotations.ts): the page only splits the tags and reads the score.
 */
import type { Annotation, NewAnnotation } from '../../core/api/client.ts';

/** What the form's inputs hold. */
export interface AnnotationDraft {
  /** '' = the whole run, else a node id. */
  target: string;
  score: string;
  /** Tags separated by commas or spaces. */
  tags: string;
  note: string;
  author: string;
}

/**
 * The payload of a draft for `runId`: tags split on commas and white space (empty ones dropped), the
 * score read as a number when given (a score that is not a number is left as NaN for the API to
 * refuse, naming the field), empty fields left out.
 */
export function annotationPayload(runId: string, d: AnnotationDraft): NewAnnotation {
  const tags = d.tags.split(/[\s,]+/).filter(Boolean);
  const score = d.score.trim();
  return {
    runId,
    ...(d.target && { nodeId: d.target }),
    ...(score !== '' && { score: Number(score) }),
    ...(tags.length && { tags }),
    ...(d.note.trim() && { note: d.note.trim() }),
    author: d.author.trim(),
  };
}

/** `score 0.5 · arith, silent · "note"`: what an annotation says, in the order the CLI prints it. */
export function annotationText(a: Pick<Annotation, 'score' | 'tags' | 'note'>): string {
  return [...(a.score !== undefined ? [`score ${a.score}`] : []), ...(a.tags.length ? [a.tags.join(', ')] : []), ...(a.note ? [`“${a.note}”`] : [])].join(' · ');
}
