// The browser entry as a page's bundler sees it (rolldown, the bundler vite uses, for the browser,
// minified): nothing from Node, no import left, and a size budget. The barrel index.ts has no test
// file of its own; this and tests/house/public-api.test.ts cover it.
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { build } from 'rolldown';
import { beforeAll, describe, expect, it } from 'vitest';

/** Budgets for the minified bundle: a few kB, as a page's heartbeat should cost. */
const MAX_MINIFIED_BYTES = 5 * 1024;
const MAX_GZIPPED_BYTES = 2 * 1024;

let code = '';

beforeAll(async () => {
  const result = await build({
    input: path.resolve(import.meta.dirname, '../../src/browser/index.ts'),
    platform: 'browser',
    write: false,
    output: { format: 'esm', minify: true },
    logLevel: 'warn',
  });
  expect(result.output).toHaveLength(1);
  code = result.output[0].code;
});

describe('@tickwheel/ws/browser, bundled for a page', () => {
  it('is one self-contained module: no import, no require, nothing of Node', () => {
    expect(code).not.toMatch(/\bimport\s*[{*("'`]|\bimport\s+\w|\brequire\s*\(/);
    expect(code).not.toMatch(/node:|\bprocess\b|\bBuffer\b|setImmediate|__dirname/);
  });

  it(`stays within ${MAX_MINIFIED_BYTES} bytes minified and ${MAX_GZIPPED_BYTES} gzipped`, () => {
    const minified = Buffer.byteLength(code);
    const gzipped = gzipSync(code).length;
    expect(minified).toBeLessThanOrEqual(MAX_MINIFIED_BYTES);
    expect(gzipped).toBeLessThanOrEqual(MAX_GZIPPED_BYTES);
  });

  it('exports watch, SilenceWatch, DeadEvent and WATCH_DEFAULTS, and runs', async () => {
    const entry = (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as Record<
      string,
      unknown
    >;
    expect(Object.keys(entry).sort()).toEqual(['DeadEvent', 'SilenceWatch', 'WATCH_DEFAULTS', 'watch']);
    const socket = Object.assign(new EventTarget(), { readyState: 3, close: () => undefined });
    const watcher = (entry.watch as (s: unknown, o: unknown) => { isStopped: boolean })(socket, { silenceMs: 1 });
    expect(watcher.isStopped).toBe(true);
  });
});
