/**
 * Test setups share this: install Debian packages the tests drive (redis-server, chromium,
 * python3-grpcio, python3-websockets) when they are missing, since CI and a new user's machine
 * start with only Node and npm. Nothing runs when `isPresent()` already holds.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** True when `binary` is on PATH. */
export function onPath(binary) {
  return spawnSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Runs `apt-get install` for `packages` unless `isPresent()` is true, then checks `isPresent()`.
 *
 * @param {string[]} packages - Debian package names
 * @param {() => boolean} isPresent - whether what the tests need is already there
 * @param {string} purpose - who needs them, for error messages ("the grpc interop test")
 */
export function ensureDebianPackages(packages, isPresent, purpose) {
  if (isPresent()) return;
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another setup may run apt-get at the same moment (vitest projects start together): wait for the dpkg lock.
  const lockWait = ['-o', 'DPkg::Lock::Timeout=600'];
  const steps = [
    ['apt-get', ...lockWait, 'update', '-q'],
    ['apt-get', ...lockWait, 'install', '-y', '-q', '--no-install-recommends', ...packages],
  ];
  // apt's and dpkg's hundred lines go to a file, not the test log; the log gets apt's summary line.
  const log = path.join(os.tmpdir(), `tickwheel-apt-${process.pid}-${packages.join('-')}.log`);
  console.log(`${purpose}: installing Debian packages ${packages.join(', ')} (apt-get output: ${log})`);
  for (const step of steps) {
    const [command, ...args] = [...sudo, ...step];
    const out = fs.openSync(log, 'a');
    const result = spawnSync(command, args, { stdio: ['ignore', out, out], env, timeout: 15 * 60_000 });
    fs.closeSync(out);
    if (result.status !== 0) {
      const tail = fs.readFileSync(log, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
      throw new Error(
        `${purpose} needs Debian packages ${packages.join(', ')}: \`${[command, ...args].join(' ')}\` failed (status ${result.status}); install them and run again. The end of ${log}:\n${tail}`,
      );
    }
  }
  const summary = fs.readFileSync(log, 'utf8').match(/^\d+ upgraded, \d+ newly installed.*$/m)?.[0];
  console.log(`${purpose}: apt-get: ${summary ?? 'done'}`);
  if (!isPresent()) throw new Error(`${purpose}: apt-get install ${packages.join(' ')} did not provide what it needs`);
}
