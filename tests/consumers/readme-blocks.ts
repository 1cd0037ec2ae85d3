/**
 * The code blocks of every README in the repository (root, packages/*, examples/*), found by folder rather than by a list.
 */
import fs from 'node:fs';
import path from 'node:path';

/** One fenced code block of a README. */
export interface CodeBlock {
  /** The README, relative to the repository root. */
  readme: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  /** The info string's first word: `ts`, `js`, `sh`, or `''`. */
  lang: string;
  code: string;
  /** The reason given by a first line `// fragment: <why>`, or undefined for a whole program. */
  fragment: string | undefined;
}

/** Languages whose blocks are programs a user copies into a .ts or .js file. */
export const programLanguages = ['ts', 'typescript', 'js', 'javascript'];

/** Every README.md at the root, in packages/*\/ and in examples/*\/, relative to `root`. */
export function readmes(root: string): string[] {
  const below = (folder: string) =>
    fs
      .readdirSync(path.join(root, folder), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, folder, entry.name, 'README.md')))
      .map((entry) => `${folder}/${entry.name}/README.md`)
      .sort();
  return ['README.md', ...below('packages'), ...below('examples')];
}

/**
 * The fenced blocks of `markdown`, by CommonMark's rule that a closing fence is the fence's
 * characters alone. A line inside a block that starts like a fence but carries text (a fence
 * whose closing line was joined to the next paragraph) throws, naming the line: CommonMark would
 * keep it in the block and swallow what follows.
 */
export function codeBlocks(readme: string, markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  let open: { fence: string; line: number; lang: string; body: string[] } | undefined;
  for (const [index, text] of lines.entries()) {
    const fence = /^ {0,3}(`{3,}|~{3,})\s*(.*)$/.exec(text);
    if (open === undefined) {
      if (fence) open = { fence: fence[1], line: index + 1, lang: fence[2].split(/\s/)[0], body: [] };
      continue;
    }
    if (fence && fence[1].startsWith(open.fence)) {
      if (fence[2] !== '') {
        throw new Error(
          `${readme}:${index + 1}: a fence with text after it inside the block opened at line ${open.line}`,
        );
      }
      const firstLine = open.body[0] ?? '';
      const fragment = /^\s*(?:\/\/|#)\s*fragment:\s*(.*)$/.exec(firstLine)?.[1];
      blocks.push({ readme, line: open.line, lang: open.lang, code: open.body.join('\n'), fragment });
      open = undefined;
      continue;
    }
    open.body.push(text);
  }
  if (open) throw new Error(`${readme}:${open.line}: a code block that is never closed`);
  return blocks;
}

/** The modules a block imports by bare name (neither relative nor `node:`), package names only. */
export function importedPackages(code: string): string[] {
  const specifiers = [...code.matchAll(/(?:from\s+|import\s+|require\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
  return specifiers
    .filter((name) => !name.startsWith('.') && !name.startsWith('node:'))
    .map((name) =>
      name
        .split('/')
        .slice(0, name.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

/** The package names an `npm install` line of a shell block names (flags and versions dropped). */
export function installedPackages(code: string): string[] {
  return code
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => /^npm (install|i|add)\b/.test(line))
    .flatMap((line) => line.split(/\s+/).slice(2))
    .filter((word) => word !== '' && !word.startsWith('-'))
    .map((word) => word.replace(/(?<=.)@[^/]*$/, ''));
}
