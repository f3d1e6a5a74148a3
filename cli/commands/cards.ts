import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { exportCards, importCards, parseCardsDocument } from '../../core/distill/index.ts';
import { act, dbOption, harden, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import { withStore } from '../wiring.ts';
import { formatCard, formatCardList } from '../formatCards.ts';

/**
 * `flowlab cards <list|show|rm|export|import>`: one commander subcommand each, sharing `--db`.
 * A missing or unknown subcommand is a UsageError naming it.
 */
export function define(cmd: Command, ctx: CommandContext): void {
  const { io } = ctx;
  cmd
    .usage('<list|show|rm|export|import> [options]')
    .description('The prior library of hint cards (test-time distillation; see docs/hint-cards.md).')
    .addHelpText('after', 'Cards distilled from simulated trajectories, or by a simulated teacher, are marked SIMULATED.')
    .argument('[command]')
    .allowExcessArguments()
    .action(act(ctx, async (sub?: string) => {
      throw new UsageError(sub ? `unknown cards command "${sub}"` : 'missing a cards command (list, show, rm, export, import)');
    }));
  const sub = (name: string, description: string) => harden(cmd.command(name), io).description(description).addOption(dbOption());

  sub('list', 'every card: id, role, title, teacher, shots, uses')
    .option('--role <role>', "only this role's cards")
    .option('--json', 'print the cards as JSON')
    .action(act(ctx, async (o: { db: string; role?: string; json?: boolean }) => withStore(o.db, (store) => {
      const cards = store.improve.listCards({ role: o.role });
      io.stdout(o.json ? JSON.stringify(cards) + '\n' : formatCardList(cards));
      return 0;
    })));

  sub('show', 'one card with its provenance and the runs that used it')
    .argument('[card-id]')
    .option('--json', 'print the card as JSON')
    .action(act(ctx, async (id: string | undefined, o: { db: string; json?: boolean }) => {
      if (id === undefined) throw new UsageError('cards show takes one <card-id>');
      return withStore(o.db, (store) => {
        const card = store.improve.getCard(id);
        const usedBy = store.improve.usesOf(card.id);
        io.stdout(o.json ? JSON.stringify({ ...card, usedBy }) + '\n' : formatCard(card, usedBy));
        return 0;
      });
    }));

  sub('rm', 'remove a card (its use records go with it)')
    .argument('[card-id]')
    .action(act(ctx, async (id: string | undefined, o: { db: string }) => {
      if (id === undefined) throw new UsageError('cards rm takes one <card-id>');
      return withStore(o.db, (store) => {
        if (!store.improve.deleteCard(id)) throw new CommandError('NOT_FOUND', `${store.file}: no card ${id}`);
        io.stderr(`Removed card ${id}.\n`);
        return 0;
      });
    }));

  sub('export', 'a versioned JSON document (all cards when no ids; stdout when no --out)')
    .argument('[ids...]')
    .option('--out <file.json>', 'where to write (default: stdout)')
    .action(act(ctx, async (ids: string[], o: { db: string; out?: string }) => withStore(o.db, (store) => {
      const all = store.improve.listCards();
      const missing = ids.filter((id) => !all.some((c) => c.id === id));
      if (missing.length) throw new CommandError('NOT_FOUND', `${store.file}: no card(s) ${missing.join(', ')}`);
      const cards = ids.length ? ids.map((id) => all.find((c) => c.id === id)!) : all;
      const text = JSON.stringify(exportCards(cards), null, 2) + '\n';
      if (o.out) {
        writeFileSync(o.out, text);
        io.stderr(`Exported ${cards.length} card(s) to ${o.out}.\n`);
      } else io.stdout(text);
      return 0;
    })));

  sub('import', 'add the cards of an exported document; refuses ids already present')
    .argument('[file.json]')
    .action(act(ctx, async (file: string | undefined, o: { db: string }) => {
      if (file === undefined) throw new UsageError('cards import takes one <file.json>');
      let value: unknown;
      try {
        value = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
        throw new CommandError(missing ? 'NOT_FOUND' : 'BAD_FILE', `${file}: ${missing ? 'no such file' : `not JSON: ${(e as Error).message}`}`);
      }
      const doc = parseCardsDocument(value, file);
      return withStore(o.db, (store) => {
        const cards = importCards(store, doc);
        const sim = cards.filter((c) => c.simulated).length;
        io.stderr(`Imported ${cards.length} card(s) into ${store.file}${sim ? ` (${sim} SIMULATED)` : ''}.\n`);
        return 0;
      }, false);
    }));
}

