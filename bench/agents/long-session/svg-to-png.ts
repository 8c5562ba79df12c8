/**
 * Rasterizes an SVG document to a PNG file with the headless Debian Chromium
 * the browser tests use, through playwright-core (a devDependency of this
 * workspace): no image library, and the text renders with real fonts.
 */
import { existsSync, writeFileSync } from "node:fs";
import { chromium } from "playwright-core";

const chromiumPath = "/usr/bin/chromium";

/** Writes `svg` (with its own width and height) to `pngPath`; throws with the fix when Chromium is missing. */
export async function writeSvgAsPng(svg: string, pngPath: string, size: { width: number; height: number }): Promise<void> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`the PNG needs Debian chromium at ${chromiumPath}: apt-get install -y chromium (the SVG beside it was written)`);
  }
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage({ viewport: size, deviceScaleFactor: 1 });
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    writeFileSync(pngPath, await page.locator("svg").screenshot({ type: "png", animations: "disabled" }));
  } finally {
    await browser.close();
  }
}
