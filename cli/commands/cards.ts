import { readFileSync, writeFileSync } from 'node:fs';
import { exportCards, importCards, parseCardsDocument } from '../../core/distill/index.ts';
import { openStore, type Store } from '../../core/store/index.ts';
import { parse, UsageError } from '../args.ts';
import { formatCard, formatCardList } from '../formatCards.ts';
import { processIo, type Io } from '../io.ts';

export const CARDS_USAGE = `Usage: flowlab cards <list|show|rm|export|import> [options]

The prior library of hint cards (test-time distillation; see docs/hint-cards.md).

  cards list [--role R] [--json]             every card: id, role, title, teacher, shots, uses
  cards show <id> [--json]                   one card with its provenance and the runs that used it
  cards rm <id>                              remove a card (its use records go with it)
  cards export [--out file.json] [ids...]    a versioned JSON document (all cards when no ids; stdout when no --out)
  cards import <file.json>                   add the cards of an exported document; refuses ids already present

Options:
  --db <file>    SQLite database    [default: flowlab.db]
Cards distilled from simulated trajectories, or by a simulated teacher, are marked SIMULATED.
`;

const db = () => ({ type: 'string' as const, default: process.env.FLOWLAB_DB ?? 'flowlab.db' });

export async function cardsCommand(argv: string[], io: Io = processIo): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'list': {
      const { values, positionals } = parse(rest, { db: db(), role: { type: 'string' }, json: { type: 'boolean', default: false } }, CARDS_USAGE);
      if (positionals.length) throw new UsageError(`cards list takes no positional arguments, got ${positionals.join(' ')}`, CARDS_USAGE);
      return withStore(values.db!, true, (store) => {
        const cards = store.improve.listCards({ role: values.role });
        io.stdout(values.json ? JSON.stringify(cards) + '\n' : formatCardList(cards));
        return 0;
      });
    }
    case 'show': {
      const { values, positionals } = parse(rest, { db: db(), json: { type: 'boolean', default: false } }, CARDS_USAGE);
      if (positionals.length !== 1) throw new UsageError('cards show takes one <card-id>', CARDS_USAGE);
      return withStore(values.db!, true, (store) => {
        const card = store.improve.getCard(positionals[0]!);
        const usedBy = store.improve.usesOf(card.id);
        io.stdout(values.json ? JSON.stringify({ ...card, usedBy }) + '\n' : formatCard(card, usedBy));
        return 0;
      });
    }
    case 'rm': {
      const { values, positionals } = parse(rest, { db: db() }, CARDS_USAGE);
      if (positionals.length !== 1) throw new UsageError('cards rm takes one <card-id>', CARDS_USAGE);
      return withStore(values.db!, true, (store) => {
        if (!store.improve.deleteCard(positionals[0]!)) throw new Error(`${store.file}: no card ${positionals[0]}`);
        io.stderr(`Removed card ${positionals[0]}.\n`);
        return 0;
      });
    }
    case 'export': {
      const { values, positionals } = parse(rest, { db: db(), out: { type: 'string' } }, CARDS_USAGE);
      return withStore(values.db!, true, (store) => {
        const all = store.improve.listCards();
        const missing = positionals.filter((id) => !all.some((c) => c.id === id));
        if (missing.length) throw new Error(`${store.file}: no card(s) ${missing.join(', ')}`);
        const cards = positionals.length ? positionals.map((id) => all.find((c) => c.id === id)!) : all;
        const text = JSON.stringify(exportCards(cards), null, 2) + '\n';
        if (values.out) {
          writeFileSync(values.out, text);
          io.stderr(`Exported ${cards.length} card(s) to ${values.out}.\n`);
        } else io.stdout(text);
        return 0;
      });
    }
    case 'import': {
      const { values, positionals } = parse(rest, { db: db() }, CARDS_USAGE);
      if (positionals.length !== 1) throw new UsageError('cards import takes one <file.json>', CARDS_USAGE);
      const file = positionals[0]!;
      let value: unknown;
      try {
        value = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        throw new Error(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `not JSON: ${(e as Error).message}`}`);
      }
      const doc = parseCardsDocument(value, file);
      return withStore(values.db!, false, (store) => {
        const cards = importCards(store, doc);
        const sim = cards.filter((c) => c.simulated).length;
        io.stderr(`Imported ${cards.length} card(s) into ${store.file}${sim ? ` (${sim} SIMULATED)` : ''}.\n`);
        return 0;
      });
    }
    default:
      throw new UsageError(sub ? `unknown cards command "${sub}"` : 'missing a cards command (list, show, rm, export, import)', CARDS_USAGE);
  }
}

function withStore<T>(file: string, mustExist: boolean, fn: (store: Store) => T): T {
  const store = openStore(file, { mustExist });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}
