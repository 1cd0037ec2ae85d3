/**
 * Installs the Debian packages the integration tests drive, when they are missing: `chromium`
 * (the real browser client, started by playwright-core with executablePath, so playwright never
 * downloads one) and `python3-websockets` (the non-JS client, run with /usr/bin/python3, where
 * Debian's Python modules load). Skipped entirely when both are present.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { ensureDebianPackages } from '../../../scripts/ensure-debian-packages.mjs';

export const CHROMIUM = '/usr/bin/chromium';
export const PYTHON = '/usr/bin/python3';

function hasPythonWebsockets(): boolean {
  return fs.existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import websockets'], { stdio: 'ignore' }).status === 0;
}

export default function setup(): void {
  ensureDebianPackages(
    ['chromium', 'python3-websockets'],
    () => fs.existsSync(CHROMIUM) && hasPythonWebsockets(),
    'the ws integration tests',
  );
}
