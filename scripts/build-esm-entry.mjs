/**
 * The ESM face of each package, written after `tsc --build` into dist/esm/: an entry (index.mjs) that
 * re-exports the CommonJS build, and the same declarations in a `"type": "module"` folder. Depends on
 * nothing but node.
 *
 * Why not a second, ESM build of the code: core holds process-wide state (the shared wheel, the
 * ambient-deadline AsyncLocalStorage), and a dual build would load two copies of it when one part of
 * an app uses `import` and another `require()`. The entry re-exports the single CommonJS instance.
 * Why the declarations are copied: TypeScript reads a `.d.ts` in the module format of its folder, and
 * resolves the peers' types it imports in that mode. `@types/ws` ships different declarations for
 * `import` and `require`, so an ESM user's `WebSocketServer` only matches ours when our declarations
 * are read as ESM too. The text is the same; only the folder's `"type"` differs.
 *
 * A package's `src/browser/` (ws's `@tickwheel/ws/browser`) is the exception: it is compiled a second
 * time, to real ES modules in dist/esm/browser/ beside its copied declarations. It holds no state to
 * share, it must load in a page with no bundler (an import map, a CDN), where a CommonJS file cannot,
 * and bundlers tree-shake it. Its CommonJS build (dist/browser/) serves `require()`.
 *
 * Usage: node scripts/build-esm-entry.mjs [--clean] [package folder ...]   (default: every folder in packages/);
 * --clean only removes dist/esm.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const clean = args[0] === '--clean';
if (clean) args.shift();
const folders =
  args.length > 0
    ? args.map((folder) => path.resolve(folder))
    : fs.readdirSync(path.join(root, 'packages')).map((name) => path.join(root, 'packages', name));

for (const folder of folders) {
  const dist = path.join(folder, 'dist');
  const esm = path.join(dist, 'esm');
  const entry = path.join(dist, 'index.js');
  if (!clean && !fs.existsSync(entry))
    throw new Error(`${path.relative(root, entry)} is missing: run tsc --build first`);
  fs.rmSync(esm, { recursive: true, force: true });
  if (clean) continue;
  fs.mkdirSync(esm, { recursive: true });
  fs.writeFileSync(path.join(esm, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);

  for (const file of declarations(dist)) {
    const target = path.join(esm, path.relative(dist, file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    // The declaration map beside the original points at ../src; from here it would be one level off.
    fs.writeFileSync(target, fs.readFileSync(file, 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'));
  }

  const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'));
  const name = manifest.name;
  // index: the public entry; every other is a subpath whose `import` points at dist/esm/<base>.mjs:
  // core's `./internal` (what the adapters share), http's `./express`, `./fastify`, `./koa`.
  for (const base of entryBases(manifest)) {
    const built = path.join(dist, `${base}.js`);
    if (!fs.existsSync(built)) continue;
    const names = Object.keys(createRequire(built)(built))
      .filter((key) => key !== '__esModule')
      .sort();
    fs.writeFileSync(
      path.join(esm, `${base}.mjs`),
      `// ESM entry of ${name}${base === 'index' ? '' : `/${base}`}: the CommonJS build's exports, so import and require() share one instance.\n` +
        `export {\n${names.map((key) => `  ${key},\n`).join('')}} from '../${base}.js';\n`,
    );
  }
  const browser = path.join(folder, 'src', 'browser');
  if (fs.existsSync(browser)) compileModules(browser, path.join(esm, 'browser'));
}

/**
 * Compiles every `.ts` file of `src` on its own to an ES module in `out`, with a source map that
 * carries its source. The CommonJS build type-checked the same files already.
 */
function compileModules(src, out) {
  fs.mkdirSync(out, { recursive: true });
  for (const name of fs.readdirSync(src).filter((file) => file.endsWith('.ts'))) {
    const file = path.join(src, name);
    const js = name.replace(/\.ts$/, '.js');
    const { outputText, sourceMapText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      fileName: name,
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ES2022,
        sourceMap: true,
        inlineSources: true,
        useDefineForClassFields: false,
      },
    });
    fs.writeFileSync(
      path.join(out, js),
      outputText.replace(/\/\/# sourceMappingURL=.*$/, `//# sourceMappingURL=${js}.map`),
    );
    const map = JSON.parse(sourceMapText);
    map.sources = [path.relative(out, file).split(path.sep).join('/')];
    fs.writeFileSync(path.join(out, `${js}.map`), JSON.stringify(map));
  }
}

/** The entries written as dist/esm/<base>.mjs: `index`, and each subpath export whose `import` is one. */
function entryBases(manifest) {
  const bases = new Set(['index']);
  for (const target of Object.values(manifest.exports ?? {})) {
    const match = /^\.\/dist\/esm\/([\w-]+)\.mjs$/.exec(target?.import?.default ?? '');
    if (match !== null) bases.add(match[1]);
  }
  return [...bases];
}

/** Every `.d.ts` under `dist`, outside dist/esm. */
function declarations(dist) {
  const found = [];
  for (const dirent of fs.readdirSync(dist, { withFileTypes: true, recursive: true })) {
    const full = path.join(dirent.parentPath, dirent.name);
    if (dirent.isFile() && dirent.name.endsWith('.d.ts') && !full.startsWith(path.join(dist, 'esm') + path.sep)) {
      found.push(full);
    }
  }
  return found;
}
