/**
 * The baseline for "free when unused": the packages' own built code with every diagnostics
 * channel compiled out. `compiledOut(['core', 'fetch'])` copies each `packages/<name>/dist` into
 * a temporary `node_modules/@tickwheel/<name>` and replaces every `<channel>.hasSubscribers` read
 * with `false`, so each guarded publishing site becomes `if (false) ...`, which V8 drops. The copy
 * is otherwise byte for byte the build under test, and its packages resolve each other (a copied
 * fetch loads the copied core), so "no subscriber" vs "compiled out" in one run measures exactly
 * what the guards cost.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR } from './harness.mjs';

const GUARD = /\b[A-Za-z_$][\w$]*\.hasSubscribers\b/g;

/**
 * @param names - package folder names (`'core'`, `'fetch'`, ...); core is always copied too
 * @returns `{ load(name), dir, remove() }`: `load` imports a copied package's entry
 * @throws when a package's build has no guard to compile out (the benchmark would measure nothing)
 */
export function compiledOut(names) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tickwheel-compiled-out-'));
  for (const name of new Set(['core', ...names])) {
    const source = path.join(BENCH_DIR, '..', 'packages', name);
    const target = path.join(dir, 'node_modules', '@tickwheel', name);
    fs.mkdirSync(path.join(target, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(source, 'package.json'), path.join(target, 'package.json'));
    let guards = 0;
    for (const file of fs.readdirSync(path.join(source, 'dist'))) {
      if (!file.endsWith('.js')) continue;
      const code = fs.readFileSync(path.join(source, 'dist', file), 'utf8');
      const stripped = code.replace(GUARD, () => {
        guards++;
        return 'false';
      });
      fs.writeFileSync(path.join(target, 'dist', file), stripped);
    }
    if (guards === 0) throw new Error(`compiledOut: packages/${name}/dist has no hasSubscribers guard to compile out`);
  }
  return {
    dir,
    load: (name) => import(pathToFileURL(path.join(dir, 'node_modules', '@tickwheel', name, 'dist', 'index.js')).href),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
