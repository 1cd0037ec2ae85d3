/**
 * Test setups share this: install Debian packages the tests drive (redis-server, chromium,
 * python3-grpcio, python3-websockets) when they are missing, since CI and a new user's machine
 * start with only Node and npm. Nothing runs when `isPresent()` already holds.
 */
import { spawnSync } from 'node:child_process';

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
    ['apt-get', ...lockWait, 'update', '-qq'],
    ['apt-get', ...lockWait, 'install', '-y', '-qq', '--no-install-recommends', ...packages],
  ];
  for (const step of steps) {
    const [command, ...args] = [...sudo, ...step];
    const result = spawnSync(command, args, { stdio: 'inherit', env, timeout: 15 * 60_000 });
    if (result.status !== 0) {
      throw new Error(
        `${purpose} needs Debian packages ${packages.join(', ')}: \`${[command, ...args].join(' ')}\` failed (status ${result.status}); install them and run again`,
      );
    }
  }
  if (!isPresent()) throw new Error(`${purpose}: apt-get install ${packages.join(' ')} did not provide what it needs`);
}
