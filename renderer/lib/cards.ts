/**
 * The Prior library view's model (pure): a card's provenance as label/value pairs, and its
 * measured effect (or why there is none) as sentences.
 */
import type { CardEffect, CardEffectView, LibraryCard } from '../../core/api/client.ts';
import { percent, timestamp } from '../views/format.ts';
import { fixed, signed, signOf, SIGN_SYMBOL, type Sign } from './rollouts.ts';

/** What a card with no measurement says. */
export const NOT_MEASURED = 'not measured yet: run with --cards and compare';

/** Most source run ids listed before "+N more". */
export const SOURCE_RUNS_SHOWN = 5;

/** The roles that have cards, sorted. */
export function cardRoles(cards: readonly LibraryCard[]): string[] {
  return [...new Set(cards.map((c) => c.role))].sort();
}

/** A card's provenance: teacher, shots, source runs, experiment, created. */
export function provenance(card: LibraryCard): Array<{ label: string; value: string }> {
  const shown = card.sourceRuns.slice(0, SOURCE_RUNS_SHOWN);
  const more = card.sourceRuns.length - shown.length;
  return [
    { label: 'Teacher', value: card.teacher },
    { label: 'Shots', value: `${card.shots}${card.onlySuccesses ? ' (successful trajectories only)' : ' (successes and failures)'}` },
    { label: 'Source runs', value: card.sourceRuns.length ? `${shown.join(', ')}${more > 0 ? ` +${more} more` : ''}` : 'none recorded' },
    { label: 'Experiment', value: card.experimentId ?? '–' },
    { label: 'Created', value: timestamp(card.createdAt) },
  ];
}

/** `used in 1 run` / `used in 3 runs` / `not used yet`. */
export function usesText(uses: number): string {
  return uses === 0 ? 'not used yet' : `used in ${uses} run${uses === 1 ? '' : 's'}`;
}

/** A measured effect as a headline and detail lines. */
export interface EffectText {
  measured: boolean;
  /** One line: the score change and h change with their signs. */
  headline: string;
  /** How it was measured: n, pairing, sign test, seeds, baseline. */
  details: string[];
  /** Direction of the score change (▲/▼/=), for the marker beside the headline. */
  sign: Sign;
}

/** Percentage points: `+50.0 pts`. */
function points(delta: number): string {
  const s = signed(delta * 100, 1);
  return `${s} pts`;
}

/** The effect of a card (undefined or null: not measured). `role` names h's role. */
export function effectText(view: CardEffectView | undefined, role: string): EffectText {
  const e: CardEffect | null | undefined = view?.effect;
  if (!e) {
    const details = view?.reason && view.usedBy.runs > 0 ? [view.reason] : [];
    return { measured: false, headline: NOT_MEASURED, details, sign: 'none' };
  }
  const score = `score ${percent(e.without.meanScore)} → ${percent(e.with.meanScore)} (${points(e.delta.score)})`;
  const h = e.delta.h === null ? `h(${role}) not recorded` : `h(${role}) ${fixed(e.without.meanH)} → ${fixed(e.with.meanH)} (${signed(e.delta.h)})`;
  const headline = `${SIGN_SYMBOL[signOf(e.delta.score)]} ${score} · ${h}`;
  const details: string[] = [];
  if (e.basis === 'paired') {
    details.push(`n = ${e.n} paired task${e.n === 1 ? '' : 's'} (with the card vs the same task without it${e.seedsMatch ? ', same seeds' : '; some pairs have different seeds'})${e.nH !== e.n ? `; h over ${e.nH}` : ''}`);
    if (e.signTest) {
      const st = e.signTest.score;
      details.push(`sign test on score: ${st.positive} better / ${st.negative} worse / ${st.ties} tied, p = ${st.p.toFixed(3)}`);
      if (e.signTest.h) {
        const sh = e.signTest.h;
        details.push(`sign test on h: ${sh.positive} better / ${sh.negative} worse / ${sh.ties} tied, p = ${sh.p.toFixed(3)}`);
      }
    }
    if (e.unpairedWith) details.push(`${e.unpairedWith} run${e.unpairedWith === 1 ? '' : 's'} with the card had no run of the same task without it (left out)`);
  } else {
    details.push(`unpaired: ${e.with.runs} run${e.with.runs === 1 ? '' : 's'} with the card vs ${e.without.runs} without, on different tasks — weak evidence; run the same tasks without --cards and compare`);
  }
  details.push(`baseline: ${e.baselineExperiments.join(', ') || '–'}`);
  return { measured: true, headline, details, sign: signOf(e.delta.score) };
}
