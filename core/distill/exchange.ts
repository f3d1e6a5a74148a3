import * as z from 'zod';
import type { Card, Store } from '../store/index.ts';
import { FlowlabError } from '../errors.ts';

/** The name and version of the card exchange document (`flowlab cards export`). */
export const CARDS_FORMAT = 'flowlab-cards';
export const CARDS_VERSION = 1;

/** A card as exported: every stored field, provenance (`meta`) included; use counts are not exported. */
const CardDoc = z.strictObject({
  id: z.string().min(1),
  role: z.string().min(1),
  title: z.string(),
  appliesWhen: z.string(),
  advice: z.string(),
  sourceRuns: z.array(z.string()),
  experimentId: z.string().optional(),
  teacher: z.string(),
  shots: z.number().int().min(0),
  onlySuccesses: z.boolean(),
  simulated: z.boolean(),
  createdAt: z.number().int(),
  meta: z.record(z.string(), z.unknown()).optional(),
});

const CardsDoc = z.strictObject({
  format: z.literal(CARDS_FORMAT),
  version: z.literal(CARDS_VERSION),
  exportedAt: z.string(),
  cards: z.array(CardDoc),
});
export type CardsDocument = z.infer<typeof CardsDoc>;

/** Why a cards document cannot be imported: not a cards document, or a card id already in the library. */
export type CardsImportErrorCode = 'BAD_DOCUMENT' | 'DUPLICATE_CARD';

export class CardsImportError extends FlowlabError<CardsImportErrorCode> {
  override readonly name = 'CardsImportError';
  constructor(code: CardsImportErrorCode, message: string) {
    super(code, message);
  }
}

/** The exchange document of some cards (as stored, in the given order). */
export function exportCards(cards: readonly (Card & { uses?: number })[], now: Date = new Date()): CardsDocument {
  return {
    format: CARDS_FORMAT,
    version: CARDS_VERSION,
    exportedAt: now.toISOString(),
    cards: cards.map(({ uses: _uses, ...c }) => c),
  };
}

/** Validates an exchange document (parsed JSON). Errors: CardsImportError `BAD_DOCUMENT` naming the problem. */
export function parseCardsDocument(value: unknown, where = 'cards document'): CardsDocument {
  if (value && typeof value === 'object' && 'version' in value && (value as { format?: unknown }).format === CARDS_FORMAT && (value as { version: unknown }).version !== CARDS_VERSION) {
    throw new CardsImportError('BAD_DOCUMENT', `${where}: version ${String((value as { version: unknown }).version)} is not supported (this Flowlab reads version ${CARDS_VERSION})`);
  }
  const r = CardsDoc.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new CardsImportError('BAD_DOCUMENT', `${where}: not a ${CARDS_FORMAT} v${CARDS_VERSION} document: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  return r.data;
}

/**
 * Stores every card of a document, or none: duplicate ids (within the document, or already in
 * the library) are refused with CardsImportError `DUPLICATE_CARD` listing them.
 */
export function importCards(store: Store, doc: CardsDocument): Card[] {
  const seen = new Set<string>();
  const twice = doc.cards.filter((c) => (seen.has(c.id) ? true : (seen.add(c.id), false))).map((c) => c.id);
  if (twice.length) throw new CardsImportError('DUPLICATE_CARD', `the document lists card(s) more than once: ${[...new Set(twice)].join(', ')}; nothing imported`);
  const have = new Set(store.improve.listCards().map((c) => c.id));
  const dup = doc.cards.filter((c) => have.has(c.id)).map((c) => c.id);
  if (dup.length) throw new CardsImportError('DUPLICATE_CARD', `${store.file} already has card(s) ${dup.join(', ')}; nothing imported (remove them with \`flowlab cards rm\` first to replace them)`);
  const cards = doc.cards.map((c) => ({ ...c }) as Card);
  for (const c of cards) store.improve.saveCard(c);
  return cards;
}
