import type { Database, Statement } from 'better-sqlite3';
import { StoreError } from './errors.ts';

/** One role's reward and group-relative advantage in one rollout (core/rollouts/advantages.ts). */
export interface AdvantageRow {
  runId: string;
  role: string;
  /** `ladder`: A from the role's ladder reward h_ρ; `flow-grpo`: the trajectory's outcome reward broadcast. */
  mode: 'ladder' | 'flow-grpo';
  groupKey: string;
  reward: number;
  advantage: number;
  groupMean: number;
  groupStd: number;
  groupSize: number;
}

/** A hint card of the prior library: advice distilled from solved trajectories (test-time, no weight change). */
export interface Card {
  id: string;
  role: string;
  title: string;
  appliesWhen: string;
  advice: string;
  sourceRuns: string[];
  experimentId?: string;
  /** Model that wrote the card (file name), or a simulated teacher, named as such. */
  teacher: string;
  shots: number;
  onlySuccesses: boolean;
  /** True when the card was distilled from simulated trajectories or by a simulated teacher. */
  simulated: boolean;
  createdAt: number;
  meta?: Record<string, unknown>;
}

/** The port's `ImproveRepo` (port.ts) over the store's connection, the only place its SQL lives (`SqliteStore.improve` checks it against the port). */
export class SqliteImproveRepo {
  private readonly st: Record<string, Statement>;
  private readonly writeAdv: (rows: readonly AdvantageRow[]) => void;

  constructor(private readonly db: Database, private readonly file: string) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      insertAdv: p(`INSERT OR REPLACE INTO advantages (run_id, role, mode, group_key, reward, advantage, group_mean, group_std, group_size)
        VALUES (?,?,?,?,?,?,?,?,?)`),
      advOfExperiment: p(`SELECT a.* FROM advantages a JOIN runs r ON r.id = a.run_id WHERE r.experiment_id = ? ORDER BY r.task_index, a.role, a.mode`),
      insertCard: p(`INSERT INTO cards (id, role, title, applies_when, advice, source_runs_json, experiment_id, teacher, shots, only_successes, simulated, created_at, meta_json)
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`),
      cardById: p('SELECT * FROM cards WHERE id = ?'),
      cards: p('SELECT c.*, (SELECT COUNT(*) FROM card_uses u WHERE u.card_id = c.id) AS uses FROM cards c ORDER BY c.created_at, c.id'),
      deleteCard: p('DELETE FROM cards WHERE id = ?'),
      useCard: p('INSERT OR IGNORE INTO card_uses (card_id, run_id) VALUES (?, ?)'),
      usesOf: p('SELECT run_id FROM card_uses WHERE card_id = ? ORDER BY run_id'),
    };
    this.writeAdv = db.transaction((rows: readonly AdvantageRow[]) => {
      for (const r of rows) this.st.insertAdv!.run(r.runId, r.role, r.mode, r.groupKey, r.reward, r.advantage, r.groupMean, r.groupStd, r.groupSize);
    });
  }

  /** Writes a group's advantages in one transaction (replacing earlier values for the same run, role and mode). */
  saveAdvantages(rows: readonly AdvantageRow[]): void {
    this.writeAdv(rows);
  }

  advantagesOf(experimentId: string): AdvantageRow[] {
    return (this.st.advOfExperiment!.all(experimentId) as Array<Record<string, unknown>>).map((r) => ({
      runId: r.run_id as string,
      role: r.role as string,
      mode: r.mode as AdvantageRow['mode'],
      groupKey: r.group_key as string,
      reward: r.reward as number,
      advantage: r.advantage as number,
      groupMean: r.group_mean as number,
      groupStd: r.group_std as number,
      groupSize: r.group_size as number,
    }));
  }

  /** Stores a card. Errors: `RUN_EXISTS` when the card id is taken. */
  saveCard(card: Card): void {
    try {
      this.st.insertCard!.run(card.id, card.role, card.title, card.appliesWhen, card.advice, JSON.stringify(card.sourceRuns), card.experimentId ?? null,
        card.teacher, card.shots, card.onlySuccesses ? 1 : 0, card.simulated ? 1 : 0, card.createdAt, JSON.stringify(card.meta ?? {}));
    } catch (err) {
      if (/UNIQUE|PRIMARY KEY/.test((err as Error).message)) throw new StoreError('RUN_EXISTS', `${this.file}: card ${card.id} already exists`, card.id, { cause: err });
      throw err;
    }
  }

  getCard(id: string): Card & { uses: number } {
    const row = this.st.cardById!.get(id) as Record<string, unknown> | undefined;
    if (!row) throw new StoreError('NOT_FOUND', `${this.file}: no card ${id}`, id);
    return { ...cardFromRow(row), uses: (this.st.usesOf!.all(id) as unknown[]).length };
  }

  listCards(filter: { role?: string } = {}): Array<Card & { uses: number }> {
    return (this.st.cards!.all() as Array<Record<string, unknown>>)
      .map((r) => ({ ...cardFromRow(r), uses: r.uses as number }))
      .filter((c) => !filter.role || c.role === filter.role);
  }

  deleteCard(id: string): boolean {
    return this.st.deleteCard!.run(id).changes > 0;
  }

  /** Records that a run's prompts carried these cards. */
  recordUses(runId: string, cardIds: readonly string[]): void {
    this.db.transaction(() => {
      for (const id of cardIds) this.st.useCard!.run(id, runId);
    })();
  }

  /** Run ids whose prompts carried a card. */
  usesOf(cardId: string): string[] {
    return this.st.usesOf!.pluck().all(cardId) as string[];
  }
}

function cardFromRow(r: Record<string, unknown>): Card {
  const card: Card = {
    id: r.id as string,
    role: r.role as string,
    title: r.title as string,
    appliesWhen: r.applies_when as string,
    advice: r.advice as string,
    sourceRuns: JSON.parse(r.source_runs_json as string) as string[],
    teacher: r.teacher as string,
    shots: r.shots as number,
    onlySuccesses: r.only_successes === 1,
    simulated: r.simulated === 1,
    createdAt: r.created_at as number,
  };
  if (r.experiment_id != null) card.experimentId = r.experiment_id as string;
  const meta = JSON.parse((r.meta_json as string) || '{}') as Record<string, unknown>;
  if (Object.keys(meta).length) card.meta = meta;
  return card;
}
