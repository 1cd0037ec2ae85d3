import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The published entry points, as users load them: `require` from CommonJS and `import` from
 * ESM, through the package's `exports` map (resolved from a folder outside the package).
 */
const packageDir = path.resolve(__dirname, '..');
let userDir: string;

beforeAll(() => {
  userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tickwheel-user-'));
  fs.mkdirSync(path.join(userDir, 'node_modules', '@tickwheel'), { recursive: true });
  fs.symlinkSync(packageDir, path.join(userDir, 'node_modules', '@tickwheel', 'core'), 'dir');
});

afterAll(() => {
  fs.rmSync(userDir, { recursive: true, force: true });
});

const program = (load: string) => `${load}
const clock = new ManualClock(0);
const wheel = new TimingWheel({ clock });
const seen = [];
wheel.schedule(5, () => seen.push(clock.now()));
clock.advance(10);
console.log(JSON.stringify({ seen, shared: typeof sharedWheel().schedule, deadline: typeof withDeadline }));
`;

function run(file: string, source: string): unknown {
  const full = path.join(userDir, file);
  fs.writeFileSync(full, source);
  return JSON.parse(execFileSync(process.execPath, [full], { cwd: userDir, encoding: 'utf8' }));
}

describe('package exports', () => {
  it('works with require() from CommonJS', () => {
    const out = run(
      'user.cjs',
      program(`const { TimingWheel, ManualClock, sharedWheel, withDeadline } = require('@tickwheel/core');`),
    );
    expect(out).toEqual({ seen: [5], shared: 'function', deadline: 'function' });
  });

  it('works with named imports from ESM', () => {
    const out = run(
      'user.mjs',
      program(`import { TimingWheel, ManualClock, sharedWheel, withDeadline } from '@tickwheel/core';`),
    );
    expect(out).toEqual({ seen: [5], shared: 'function', deadline: 'function' });
  });

  it('shares one process-wide wheel between require() and import', () => {
    const out = run(
      'both.mjs',
      `import { createRequire } from 'node:module';
import { sharedWheel } from '@tickwheel/core';
const require = createRequire(import.meta.url);
console.log(JSON.stringify(require('@tickwheel/core').sharedWheel() === sharedWheel()));`,
    );
    expect(out).toBe(true);
  });

  it('keeps its argument checks, adapter-only routes and drivers internal: on @tickwheel/core/internal, not the public entry', () => {
    // On the internal entry: argument checks the adapters share, and the adapter-only routes.
    const internalOnly = [
      'requireFunction',
      'describeValue',
      'optionKit',
      'scheduleTask',
      'scheduleTaskAt',
      'ownedDeadline',
      'enableAmbientDeadlines',
      'isDrivingClock',
      'NativeDriver',
    ];
    // Core's own checks, on neither entry.
    const checks = [...internalOnly, 'requireMs', 'optionalMs', 'requirePowerOfTwo'];
    const out = run(
      'internal.cjs',
      `const pub = require('@tickwheel/core');
const internal = require('@tickwheel/core/internal');
const checks = ${JSON.stringify(checks)};
console.log(JSON.stringify({
  pub: checks.filter((name) => name in pub),
  internal: checks.filter((name) => typeof internal[name] === 'function'),
}));`,
    );
    expect(out).toEqual({ pub: [], internal: internalOnly });
  });

  it('ships type declarations first in the import and require branches of the exports map', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
    for (const branch of [pkg.exports['.'].import, pkg.exports['.'].require]) {
      expect(Object.keys(branch)[0]).toBe('types');
      expect(fs.existsSync(path.join(packageDir, branch.types))).toBe(true);
    }
  });
});
