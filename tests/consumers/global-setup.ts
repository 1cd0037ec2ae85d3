/**
 * Packs every package as `npm publish` would and installs the tarballs, with the real peers, into one
 * fresh folder outside the workspace; starts a redis-server on a unix socket for the redis snippet.
 * Depends on the built dist/ folders (`npm test` builds first) and on npm's cache for the peers.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDebianPackages, onPath } from '../../scripts/ensure-debian-packages.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The user's folder: node_modules with the tarballs and peers; test files add projects below it. */
    consumerRoot: string;
    /** The packed tarballs, by package name. */
    tarballs: Record<string, string>;
    redisSocket: string;
  }
}

const workspace = path.resolve(import.meta.dirname, '../..');
/** Every folder of packages/, so that a package added later is packed and checked without a list to update. */
const packages = fs
  .readdirSync(path.join(workspace, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(workspace, 'packages', entry.name, 'package.json')))
  .map((entry) => entry.name)
  .sort();

/** The version of a peer the workspace tests with, so that npm finds it in its cache. */
function testedVersion(name: string, from = workspace): string {
  const require = createRequire(path.join(from, 'package.json'));
  let file: string;
  try {
    file = require.resolve(`${name}/package.json`);
  } catch {
    // An exports map that hides package.json (hono's): the nearest one above its entry named so.
    file = path.dirname(require.resolve(name));
    while (!fs.existsSync(path.join(file, 'package.json')) || !isPackage(path.join(file, 'package.json'), name)) {
      if (file === path.dirname(file)) throw new Error(`no package.json of ${name} above its entry`);
      file = path.dirname(file);
    }
    file = path.join(file, 'package.json');
  }
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

function isPackage(file: string, name: string): boolean {
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string }).name === name;
}

export default async function setup(project: TestProject): Promise<() => void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tickwheel-consumer-'));
  const packed = JSON.parse(
    execFileSync(
      'npm',
      [
        'pack',
        '--json',
        '--ignore-scripts',
        '--pack-destination',
        root,
        ...packages.map((name) => `--workspace=packages/${name}`),
      ],
      { cwd: workspace, encoding: 'utf8', timeout: 60_000 },
    ),
  ) as Array<{ name: string; filename: string }>;
  const tarballs = Object.fromEntries(packed.map(({ name, filename }) => [name, path.join(root, filename)]));

  const dependencies: Record<string, string> = Object.fromEntries(
    packed.map(({ name, filename }) => [name, `file:./${filename}`]),
  );
  for (const peer of ['ws', '@grpc/grpc-js', '@types/node']) dependencies[peer] = testedVersion(peer);
  // ioredis as redis's tests use it (the newest major; the workspace root keeps 5 for ioredis-mock and BullMQ).
  dependencies.ioredis = testedVersion('ioredis', path.join(workspace, 'packages/redis'));
  dependencies['@grpc/proto-loader'] = testedVersion('@grpc/proto-loader', path.join(workspace, 'packages/grpc'));
  // The frameworks packages/http's README blocks import, with their types, as its tests use them.
  for (const name of ['express', '@types/express', 'fastify', 'koa', '@types/koa', 'hono', '@hono/node-server'])
    dependencies[name] = testedVersion(name, path.join(workspace, 'packages/http'));
  // fetch's own tests run on undici 7 (Node's global fetch is undici 6 on Node 20 and 22).
  dependencies.undici = testedVersion('undici', path.join(workspace, 'packages/fetch'));
  // The SDK fetch's README hands the wrapped fetch to (its "Event streams" block), as its tests use it.
  // (openai's package.json is not in its exports map: the range is read from fetch's devDependencies.)
  dependencies.openai = JSON.parse(
    fs.readFileSync(path.join(workspace, 'packages/fetch/package.json'), 'utf8'),
  ).devDependencies.openai;
  // otel's peer, and the SDK its snippet records into (a user's app has one), at the exact versions
  // otel's tests pin (the SDK's package.json is not in its exports map, so it is read from ours).
  const otel = JSON.parse(fs.readFileSync(path.join(workspace, 'packages/otel/package.json'), 'utf8'));
  for (const name of ['@opentelemetry/api', '@opentelemetry/sdk-metrics'])
    dependencies[name] = otel.devDependencies[name];
  // What the README blocks import besides the packages and their peers (readme.test.ts), at the
  // versions the examples use.
  dependencies['@opentelemetry/exporter-prometheus'] = testedVersion(
    '@opentelemetry/exporter-prometheus',
    path.join(workspace, 'examples/otel-metrics'),
  );
  // The frameworks of @tickwheel/http's entries (its README blocks), at the versions its tests use.
  // Not @types/koa: 3.0 does not compile without skipLibCheck (content-disposition's Options).
  for (const name of ['express', 'fastify', 'koa', '@types/express'])
    dependencies[name] = testedVersion(name, path.join(workspace, 'packages/http'));
  fs.writeFileSync(
    path.join(root, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, dependencies }, null, 2),
  );
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 120_000,
  });

  ensureDebianPackages(['redis-server'], () => onPath('redis-server'), 'the consumer tests');
  const redisSocket = path.join(root, 'redis.sock');
  const redis = spawn(
    'redis-server',
    ['--port', '0', '--unixsocket', redisSocket, '--save', '', '--appendonly', 'no', '--dir', root],
    {
      stdio: 'ignore',
    },
  );
  const startedBy = Date.now() + 10_000;
  while (!fs.existsSync(redisSocket)) {
    if (redis.exitCode !== null || Date.now() > startedBy)
      throw new Error(`redis-server did not create ${redisSocket} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  project.provide('consumerRoot', root);
  project.provide('tarballs', tarballs);
  project.provide('redisSocket', redisSocket);
  return () => {
    if (redis.pid !== undefined && redis.exitCode === null) process.kill(redis.pid, 'SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  };
}
