/**
 * Writes a snippet as a user's file (ESM, CommonJS or TypeScript) and runs node or tsc on it, each
 * with a time limit. Depends on the workspace only for the compilers (`typescript` and `typescript-7`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { Snippet } from './snippets.js';

/** The compilers users have: today's TypeScript 5.9 and TypeScript 7 (the native port, installed as `typescript-7`). */
export const compilers = {
  'TypeScript 5.9': path.resolve(import.meta.dirname, '../../node_modules/typescript/bin/tsc'),
  'TypeScript 7': path.resolve(import.meta.dirname, '../../node_modules/typescript-7/bin/tsc'),
};

/** The snippet's file name without extension: `@tickwheel/ws` -> `ws`, `@tickwheel/ws/browser` -> `ws-browser`. */
export function fileName(snippet: Snippet): string {
  return snippet.entry.replace('@tickwheel/', '').replaceAll('/', '-');
}

/**
 * The snippet as a file of `style`: import declarations (or require calls), then `main()` and a
 * line that prints its result as JSON. Plain JS gets the TypeScript body with its types stripped.
 */
export function source(snippet: Snippet, style: 'esm' | 'cjs' | 'ts'): string {
  const header = Object.entries(snippet.imports).map(([module, names]) =>
    style === 'cjs'
      ? `const { ${names.map((name) => name.replace(' as ', ': ')).join(', ')} } = require('${module}');`
      : `import { ${names.join(', ')} } from '${module}';`,
  );
  const main = `async function main() {${snippet.body}\n}\n`;
  const body =
    style === 'ts'
      ? main
      : ts.transpileModule(main, { compilerOptions: { target: ts.ScriptTarget.ES2022 } }).outputText;
  const run = `main().then((result) => console.log(JSON.stringify(result)), (error) => {\n  console.error(error);\n  process.exitCode = 1;\n});\n`;
  return `${header.join('\n')}\n\n${body}\n${run}`;
}

/** Writes `files` (name -> text) into `dir`, creating it. */
export function writeProject(dir: string, files: Record<string, string>): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
}

/** Runs `file` with this process's node and returns the JSON its last line printed. */
export function runNode(file: string, env: Record<string, string> = {}): unknown {
  const out = execFileSync(process.execPath, [file], {
    cwd: path.dirname(file),
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 30_000,
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? 'null');
}

/** Compiles the TypeScript project in `dir` with `tsc`; throws with tsc's diagnostics when it fails. */
export function compile(dir: string, tsc: string = compilers['TypeScript 5.9']): void {
  try {
    // Within the hook's 180 s: TypeScript 5.9 took over 120 s for these projects at a load average of 45 on 2 cores.
    execFileSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', timeout: 170_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc -p ${path.basename(dir)} failed:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}
