// The package's clock rule (README, "Which clock"): every wait and local duration on the wheel's
// clock, so that one ManualClock drives them; Redis TIME is the one other clock, and with
// timeSource 'local' ShardCalls.now()'s Date.now() stands in for it. A new raw timer or clock
// read anywhere in src/ fails here until the rule says where it belongs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src', import.meta.url));
const RAW_TIME = /\b(Date\.now|performance\.now|setTimeout|setInterval)\s*\(/g;

/** The code of `text` without its comments (block and line), so that prose may name the calls. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('clock rule', () => {
  it('leaves one raw clock read in src/: the local stand-in for TIME in ShardCalls.now()', () => {
    const found: string[] = [];
    const files = readdirSync(src).filter((name) => name.endsWith('.ts'));
    expect(files).toContain('call-gate.ts');
    for (const name of files) {
      for (const match of code(readFileSync(join(src, name), 'utf8')).matchAll(RAW_TIME)) {
        found.push(`${name}: ${match[1]}`);
      }
    }
    expect(found).toEqual(['shard-calls.ts: Date.now']);
  });
});
