// The browser page in headless Chromium (Debian's, driven by playwright-core): load the
// component, paste a DSL update, apply it, and see the rendered memory on screen. The page
// runs web/app.js as a bundler makes it (esbuild, for the browser, nothing marked external and
// no wasm copied by hand: the package inlines its core module).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { build, stop } from 'esbuild';

const root = new URL('../', import.meta.url);
/** @type {Record<string, string>} */
const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

function serve() {
  const server = createServer(async (req, res) => {
    const path = new URL(`.${decodeURIComponent((req.url ?? '/').split('?')[0])}`, root);
    if (!path.href.startsWith(root.href)) return res.writeHead(403).end();
    try {
      const body = await readFile(path);
      res.writeHead(200, { 'content-type': types[extname(path.pathname)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  /** @type {Promise<import('node:http').Server>} */
  const listening = new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
  return listening;
}

test('the page renders a memory from a pasted DSL update', async () => {
  await build({ entryPoints: [fileURLToPath(new URL('web/app.js', root))], bundle: true, platform: 'browser', format: 'esm',
    outfile: fileURLToPath(new URL('web/dist/bundle.js', root)), logLevel: 'error' });
  // esbuild's service process would keep the test file from exiting.
  await stop();
  const server = await serve();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    /** @type {string[]} */
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
    await page.goto(`http://127.0.0.1:${port}/web/index.html`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
    const overview = page.locator('#overview');
    const before = await overview.screenshot();

    const update = await readFile(new URL('../../tests/corpus/002-two-space-canonical.dsl', root), 'utf8');
    await page.fill('#dsl', update);
    await page.click('#apply');
    await page.waitForFunction(() => document.getElementById('overview')?.textContent?.includes('KL-1'));

    const text = await overview.innerText();
    assert.match(text, /- \*\*KL-1\*\*: the scale factor is applied twice/);
    assert.match(text, /### VC-1: test command/);
    assert.match(text, /- Fixing Quantity\.to\(\)/);
    assert.ok(await overview.isVisible());
    // What is on screen changed: the rendered memory was painted, not only put in the DOM.
    const after = await overview.screenshot();
    assert.notDeepStrictEqual(after, before);

    // A malformed update shows its diagnostics and leaves the memory as it was.
    await page.fill('#dsl', 'KEY_LEARNINGS:\n  ADD:\n    - no reason\n');
    await page.click('#apply');
    await page.waitForSelector('#diagnostics li.error');
    assert.equal(await page.locator('#diagnostics li.error').first().innerText(), '3:7 error: a Key Learnings ADD bullet must start with `because <reason>:`');
    assert.equal(await overview.innerText(), text);

    const out = new URL('../test-results/', import.meta.url);
    await mkdir(out, { recursive: true });
    await writeFile(new URL('browser.png', out), await page.screenshot({ fullPage: true }));
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
  }
});
