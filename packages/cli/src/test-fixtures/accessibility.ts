/**
 * Accessibility checks for the `perdure dev` browser tests: axe-core's WCAG
 * 2.1 A and AA rules over the page as it stands, failing with every
 * violation's rule and the elements it found.
 */
import assert from "node:assert/strict";
import { AxeBuilder } from "@axe-core/playwright";
import type { Page } from "playwright-core";

/** The axe-core tags of WCAG 2.0 and 2.1, levels A and AA. */
export const wcag21aaTags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

/** Runs axe-core's WCAG 2.1 A and AA rules on `page` and fails on any violation, naming `state`. */
export async function assertNoAxeViolations(page: Page, state: string): Promise<void> {
  // A running transition would leave axe measuring a colour half-way.
  await page.evaluate(() => Promise.all(document.getAnimations().filter((animation) => animation.effect?.getTiming().iterations !== Infinity).map((animation) => animation.finished.catch(() => undefined))));
  // Legacy mode runs axe in the page itself: the UI has no frames, and it spares a new page for every check.
  // Colours are measured as they rest: a fade that starts during the check (a hover) would blend them.
  await page.addStyleTag({ content: "*, *::before, *::after { transition: none !important; animation-play-state: paused !important; }" });
  const results = await new AxeBuilder({ page }).withTags(wcag21aaTags).setLegacyMode(true).analyze();
  const found = results.violations.map((violation) => ({
    rule: violation.id,
    impact: violation.impact,
    help: violation.help,
    nodes: violation.nodes.map((node) => `${node.target.join(" ")} — ${node.failureSummary?.split("\n").slice(1).join(" ").trim() ?? ""}`),
  }));
  assert.deepEqual(found, [], `axe found WCAG 2.1 AA violations in the state "${state}":\n${JSON.stringify(found, null, 2)}`);
}
