/**
 * Screenshots the lab's Studies view over a database (e.g. one `flowlab study` wrote), through
 * `flowlab serve` and headless Debian Chromium as e2e/harness.ts runs them.
 *   npx tsx scripts/screenshot-studies-view.ts <flowlab.db> <out.png>
 */
import { copyFileSync } from 'node:fs';
import { createWorkspace, ensureRendererBuilt, launchBrowser, startServe } from '../e2e/harness.ts';

const [db, out] = process.argv.slice(2);
if (!db || !out) throw new Error('usage: npx tsx scripts/screenshot-studies-view.ts <flowlab.db> <out.png>');
ensureRendererBuilt();
const ws = createWorkspace();
copyFileSync(db, ws.db);
const serve = await startServe(ws);
const ctx = await launchBrowser(ws);
try {
  const page = await ctx.newPage();
  await page.goto(serve.url);
  await page.click('[data-testid="nav-studies"]');
  await page.locator('[data-testid="study-chart"]').first().waitFor({ timeout: 30_000 });
  await page.screenshot({ path: out, fullPage: true, animations: 'disabled' });
  console.log(`wrote ${out}`);
} finally {
  await ctx.close();
  await serve.stop();
  ws.remove();
}
