/**
 * Installs the Debian packages the integration tests drive, when they are missing: `chromium`
 * (the real browser client, started by playwright-core with executablePath, so playwright never
 * downloads one) and `python3-websockets` (the non-JS client, run with /usr/bin/python3, where
 * Debian's Python modules load). Skipped entirely when both are present.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';
export const PYTHON = '/usr/bin/python3';

function hasPythonWebsockets(): boolean {
  return fs.existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import websockets'], { stdio: 'ignore' }).status === 0;
}

export default function setup(): void {
  const missing: string[] = [];
  if (!fs.existsSync(CHROMIUM)) missing.push('chromium');
  if (!hasPythonWebsockets()) missing.push('python3-websockets');
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`the ws integration tests need Debian packages ${missing.join(', ')}; install them (apt-get install -y ${missing.join(' ')}) or run as root`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another process may hold the dpkg lock for a while (a parallel install): wait for it.
  const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
  execFileSync('apt-get', [...lockWait, 'update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', [...lockWait, 'install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: 'inherit', env, timeout: 15 * 60_000 });
  if (!fs.existsSync(CHROMIUM) || !hasPythonWebsockets()) throw new Error(`apt-get install ${missing.join(' ')} did not provide ${CHROMIUM} and websockets for ${PYTHON}`);
}
