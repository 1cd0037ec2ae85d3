/**
 * cluster-timers needs Debian's redis-server: install it when it is missing (CI starts
 * from a machine with only Node and npm). Nothing to do when the binary is on PATH.
 */
import { spawnSync } from 'node:child_process';

function onPath(binary) {
  return spawnSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' }).status === 0;
}

export default function setup() {
  if (onPath('redis-server')) return;
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
  for (const args of [['apt-get', ...lockWait, 'update', '-qq'], ['apt-get', ...lockWait, 'install', '-y', '-qq', '--no-install-recommends', 'redis-server']]) {
    const [command, ...rest] = [...sudo, ...args];
    const result = spawnSync(command, rest, { stdio: 'inherit', env, timeout: 600_000 });
    if (result.status !== 0) throw new Error(`${[command, ...rest].join(' ')} failed (status ${result.status}); install redis-server to run cluster-timers`);
  }
}
