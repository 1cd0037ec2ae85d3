import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

describe('types', () => {
  it(
    'keeps the wrapped fetch signature and checks per-request timeouts (tsc on test/types/signatures.ts)',
    { timeout: 120_000 },
    async () => {
      const tsc = require.resolve('typescript/bin/tsc');
      const project = path.join(import.meta.dirname, 'types', 'tsconfig.json');
      const result = await promisify(execFile)(process.execPath, [tsc, '-p', project]).then(
        () => ({ code: 0, output: '' }),
        (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
      );
      expect(result.output).toBe('');
      expect(result.code).toBe(0);
    },
  );
});
