/**
 * Screenshots a study's HTML report (flowlab study writes report.html) with headless Debian
 * Chromium through playwright-core, the way e2e/harness.ts launches it.
 *   npx tsx scripts/screenshot-report.ts <report.html> <out.png> [width]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { browserMissing, CHROMIUM_FLAGS, findChromium } from '../e2e/harness.ts';

const [report, out, width = '1280'] = process.argv.slice(2);
if (!report || !out) throw new Error('usage: npx tsx scripts/screenshot-report.ts <report.html> <out.png> [width]');
const executablePath = findChromium();
if (!executablePath) throw new Error(browserMissing());
const profile = mkdtempSync(path.join(os.tmpdir(), 'flowlab-shot-'));
const ctx = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: [...CHROMIUM_FLAGS], viewport: { width: Number(width), height: 800 }, deviceScaleFactor: 1, locale: 'en-US', timezoneId: 'UTC' });
try {
  const page = await ctx.newPage();
  await page.goto(pathToFileURL(path.resolve(report)).href);
  await page.screenshot({ path: out, fullPage: true, animations: 'disabled' });
  console.log(`wrote ${out}`);
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
