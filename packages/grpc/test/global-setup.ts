/**
 * Installs Debian's `python3-grpcio` when it is missing: the interop test drives our server with
 * a Python gRPC client (grpcio, built on gRPC's C core, not grpc-js). Debian's Python modules load
 * under /usr/bin/python3, not whatever `python3` comes first on PATH.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { ensureDebianPackages } from '../../../scripts/ensure-debian-packages.mjs';

export const PYTHON = '/usr/bin/python3';

function hasGrpcio(): boolean {
  return fs.existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import grpc'], { stdio: 'ignore' }).status === 0;
}

export default function setup(): void {
  ensureDebianPackages(['python3-grpcio'], hasGrpcio, 'the grpc interop test');
}
