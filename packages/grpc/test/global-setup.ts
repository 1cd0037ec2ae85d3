/**
 * Installs Debian's `python3-grpcio` when it is missing: the interop test drives our server with
 * a Python gRPC client (grpcio, built on gRPC's C core, not grpc-js). Debian's Python modules load
 * under /usr/bin/python3, not whatever `python3` comes first on PATH. Skipped when present.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';

export const PYTHON = '/usr/bin/python3';

function hasGrpcio(): boolean {
  return fs.existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import grpc'], { stdio: 'ignore' }).status === 0;
}

export default function setup(): void {
  if (hasGrpcio()) return;
  if (process.getuid?.() !== 0) {
    throw new Error('the grpc interop test needs Debian package python3-grpcio; install it (apt-get install -y python3-grpcio) or run as root');
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another process may hold the dpkg lock for a while (a parallel install): wait for it.
  const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
  execFileSync('apt-get', [...lockWait, 'update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', [...lockWait, 'install', '-y', '-qq', '--no-install-recommends', 'python3-grpcio'], { stdio: 'inherit', env, timeout: 15 * 60_000 });
  if (!hasGrpcio()) throw new Error(`apt-get install python3-grpcio did not make grpc importable by ${PYTHON}`);
}
