// The layer rules of eslint.config.mjs can fail (issue 30): each rule is fed one violation, as
// the text of a real file with one line added, and must report it; the files as they are pass.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
// typescript-eslint parses each file once from disk when it believes it is a one-off CI run
// (CI=true), which would lint the file without the violation added here.
process.env.TSESTREE_SINGLE_RUN = 'false';
const eslint = new ESLint({ cwd: root });

/** The messages of the rules that `line`, appended to `file`, breaks. */
async function violations(file: string, line: string): Promise<string[]> {
  const text = `${readFileSync(join(root, file), 'utf8')}\n${line}\n`;
  const [result] = await eslint.lintText(text, { filePath: join(root, file) });
  return result.messages
    .filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports' || m.ruleId?.startsWith('no-restricted'))
    .map((m) => m.message);
}

describe('layer rules (eslint.config.mjs)', () => {
  it('refuses an adapter importing another adapter', async () => {
    const found = await violations(
      'packages/ws/src/options.ts',
      "import type { TimeoutError } from '@tickwheel/fetch';\nexport type Y = TimeoutError;",
    );
    expect(found.join('\n')).toMatch(/never on each other/);
  });

  it('refuses the core kit importing anything above it', async () => {
    const found = await violations(
      'packages/core/src/kit/json-value.ts',
      "import type { TimingWheel } from '../wheel/timing-wheel.js';\nexport type X = TimingWheel;",
    );
    expect(found.join('\n')).toMatch(/The kit is core's leaf/);
  });

  it('refuses the wheel importing deadlines', async () => {
    const found = await violations(
      'packages/core/src/wheel/bucket.ts',
      "import type { Deadline } from '../deadlines/deadline.js';\nexport type Z = Deadline;",
    );
    expect(found.join('\n')).toMatch(/below deadlines/);
  });

  it('refuses the fetch transport tap touching the Response', async () => {
    const found = await violations(
      'packages/fetch/src/tap-handlers.ts',
      'export const seen = (r: Response): boolean => r instanceof Response;',
    );
    expect(found.join('\n')).toMatch(/never touches the Response/);
    expect(found.length).toBeGreaterThanOrEqual(2);
  });

  it.each([
    'export const x = (s: { _socket?: unknown }): unknown => s._socket;',
    "export const x = (s: Record<string, unknown>): unknown => s['_receiver'];",
    "export const x = (s: object): boolean => '_autoPong' in s;",
    'export const x = ({ _req }: { _req?: unknown }): unknown => _req;',
  ])("refuses a read of ws's private fields outside its one seam: %s", async (line) => {
    const found = await violations('packages/ws/src/liveness-check.ts', line);
    expect(found.join('\n')).toMatch(/ws-internals\.ts/);
  });

  it('finds nothing in those files as they are', async () => {
    for (const file of [
      'packages/ws/src/options.ts',
      'packages/core/src/kit/json-value.ts',
      'packages/fetch/src/tap-handlers.ts',
      'packages/ws/src/liveness-check.ts',
      'packages/ws/src/ws-internals.ts',
    ]) {
      expect(await violations(file, ''), file).toEqual([]);
    }
  });
}, 120_000);
