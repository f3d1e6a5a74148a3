/** How `cards` and `distill` print hint cards. */
import Table from 'cli-table3';
import type { Card } from '../core/store/index.ts';

const SIM = 'SIMULATED';

/** One card, as `cards show` and `distill` print it. */
export function formatCard(card: Card & { uses?: number }, usedBy?: readonly string[]): string {
  const prov = card.meta?.provenance as { requestedShots?: number } | undefined;
  const online = card.meta?.online as { afterTasks?: number } | undefined;
  const asked = prov?.requestedShots !== undefined && prov.requestedShots !== card.shots ? ` (asked for ${prov.requestedShots})` : '';
  return [
    `${card.id}${card.simulated ? `  ${SIM} (distilled from simulated trajectories or by a simulated teacher)` : ''}`,
    `  role           ${card.role}`,
    `  title          ${card.title}`,
    `  applies when   ${card.appliesWhen}`,
    `  advice         ${card.advice}`,
    `  teacher        ${card.teacher}`,
    `  shots          ${card.shots}${asked}${card.onlySuccesses ? ', successful runs only' : ', best runs by ladder reward'}`,
    `  source runs    ${card.sourceRuns.join(', ') || '-'}`,
    ...(card.experimentId ? [`  experiment     ${card.experimentId}${online?.afterTasks !== undefined ? ` (online, after ${online.afterTasks} tasks)` : ''}`] : []),
    `  created        ${new Date(card.createdAt).toISOString()}`,
    ...(card.uses !== undefined ? [`  uses           ${card.uses}${usedBy?.length ? ` (${usedBy.slice(0, 10).join(', ')}${usedBy.length > 10 ? ', …' : ''})` : ''}`] : []),
  ].join('\n') + '\n';
}

/** The `cards list` table. */
export function formatCardList(cards: ReadonlyArray<Card & { uses: number }>): string {
  if (!cards.length) return 'No hint cards (distil one with `flowlab distill`, or `flowlab cards import`).\n';
  const t = new Table({ head: ['id', 'role', 'title', 'teacher', 'shots', 'uses', ''], style: { head: [], border: [], compact: true } });
  for (const c of cards) t.push([c.id, c.role, c.title.length > 40 ? c.title.slice(0, 39) + '…' : c.title, c.teacher, String(c.shots), String(c.uses), c.simulated ? SIM : '']);
  return t.toString() + '\n';
}
