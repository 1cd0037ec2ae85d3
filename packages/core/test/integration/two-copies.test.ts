/**
 * Two copies of @tickwheel/core in one process, as npm installs them whenever two dependents ask
 * for different versions: the workspace copy (which @tickwheel/fetch, /ws and /grpc load) and a
 * packed copy with another version number, nested under a fixture folder. Wheels, the shared
 * wheel and the ambient deadline made by one copy must work with everything built on the other.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as copyA from '@tickwheel/core';
import { withTimeouts } from '@tickwheel/fetch';
import { deadlineInterceptor, serverDeadlineInterceptor } from '@tickwheel/grpc';
import { heartbeat } from '@tickwheel/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';

type Core = typeof copyA;

let fixtureDir: string;
let copyB: Core;
let server: http.Server;
let slowUrl: string;

beforeAll(async () => {
  fixtureDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tickwheel-two-copies-'));
  const packageDir = path.resolve(__dirname, '../..');
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', fixtureDir], {
    cwd: packageDir,
    encoding: 'utf8',
    timeout: 60_000,
  })
    .trim()
    .split('\n')
    .pop()!;
  execFileSync('tar', ['-xzf', path.join(fixtureDir, tarball), '-C', fixtureDir], { timeout: 30_000 });
  const nested = path.join(fixtureDir, 'node_modules', '@tickwheel', 'core');
  fs.mkdirSync(path.dirname(nested), { recursive: true });
  fs.renameSync(path.join(fixtureDir, 'package'), nested);
  const manifest = JSON.parse(fs.readFileSync(path.join(nested, 'package.json'), 'utf8')) as { version: string };
  manifest.version = '0.1.1-fixture';
  fs.writeFileSync(path.join(nested, 'package.json'), JSON.stringify(manifest));
  copyB = createRequire(path.join(fixtureDir, 'app.js'))('@tickwheel/core') as Core;

  server = http.createServer((req, res) => {
    const timer = setTimeout(() => res.end('late'), 2_000);
    req.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
}, 90_000);

afterAll(async () => {
  copyA.sharedWheel().close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(fixtureDir, { recursive: true, force: true });
});

/** Makes `maker`'s copy create the process-wide shared wheel afresh. */
function sharedWheelFrom(maker: Core): copyA.TimingWheel {
  copyA.sharedWheel().close();
  return maker.sharedWheel();
}

describe('two copies of @tickwheel/core in one process', () => {
  it("really are two copies, with different versions, that recognise each other's wheels", () => {
    const nestedManifest = JSON.parse(
      fs.readFileSync(path.join(fixtureDir, 'node_modules/@tickwheel/core/package.json'), 'utf8'),
    ) as { version: string };
    expect(nestedManifest.version).toBe('0.1.1-fixture');
    expect(copyB.TimingWheel).not.toBe(copyA.TimingWheel);
    const wheelB = new copyB.TimingWheel({ clock: new copyB.ManualClock() });
    expect(wheelB instanceof copyA.TimingWheel).toBe(false);
    expect(copyA.isTimingWheel(wheelB)).toBe(true);
    expect(copyB.isTimingWheel(new copyA.TimingWheel({ clock: new copyA.ManualClock() }))).toBe(true);
    expect(copyA.isTimingWheel({ clock: {}, schedule() {} })).toBe(false);
  });

  it('shares one shared wheel whichever copy made it', () => {
    const wheel = sharedWheelFrom(copyB);
    expect(copyA.sharedWheel()).toBe(wheel);
  });

  it('a timed fetch with no wheel option runs on a shared wheel the other copy made', async () => {
    sharedWheelFrom(copyB);
    const timedFetch = withTimeouts(fetch, { totalMs: 150 });
    const started = performance.now();
    await expect(timedFetch(slowUrl)).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(1_500);
  }, 10_000);

  it('withDeadline from one copy bounds a fetch timed through the other', async () => {
    sharedWheelFrom(copyA);
    const timedFetch = withTimeouts(fetch);
    const started = performance.now();
    await expect(copyB.withDeadline(200, () => timedFetch(slowUrl))).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(1_500);
  }, 10_000);

  it('a heartbeat runs on a wheel from the other copy, given or shared', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => wss.once('listening', resolve));
    const given = heartbeat(wss, { pingIntervalMs: 30, pongTimeoutMs: 30, wheel: new copyB.TimingWheel() });
    sharedWheelFrom(copyB);
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    const watcher = heartbeat(client, { pingIntervalMs: 1_000, pongTimeoutMs: 1_000 });
    let pings = 0;
    client.on('ping', () => pings++);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(pings).toBeGreaterThanOrEqual(2);
    expect(client.readyState).toBe(WebSocket.OPEN);
    watcher.stop();
    given.stop();
    client.terminate();
    await new Promise((resolve) => wss.close(resolve));
  }, 10_000);

  it("a gRPC call inside the other copy's withDeadline gets that deadline, and its handler sees it", async () => {
    sharedWheelFrom(copyB);
    const service: grpc.ServiceDefinition = {
      slow: {
        path: '/fixture.Slow/Slow',
        requestStream: false,
        responseStream: false,
        requestSerialize: (b: Buffer) => b,
        requestDeserialize: (b: Buffer) => b,
        responseSerialize: (b: Buffer) => b,
        responseDeserialize: (b: Buffer) => b,
      },
    };
    const seen: number[] = [];
    const grpcServer = new grpc.Server({ interceptors: [serverDeadlineInterceptor({ defaultTimeoutMs: 5_000 })] });
    grpcServer.addService(service, {
      slow: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => {
        seen.push(copyB.currentDeadline()?.remaining() ?? -1);
        setTimeout(() => callback(null, Buffer.from('late')), 1_000);
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) =>
        error ? reject(error) : resolve(p),
      ),
    );
    const Client = grpc.makeGenericClientConstructor(service, 'Slow');
    const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
      interceptors: [deadlineInterceptor()],
    }) as unknown as grpc.Client & {
      slow(req: Buffer, cb: (error: grpc.ServiceError | null) => void): void;
    };
    const started = performance.now();
    const error = await copyB.withDeadline(
      150,
      () => new Promise<grpc.ServiceError | null>((resolve) => client.slow(Buffer.from('x'), resolve)),
    );
    expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(performance.now() - started).toBeLessThan(900);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeGreaterThan(0);
    expect(seen[0]).toBeLessThanOrEqual(150);
    client.close();
    grpcServer.forceShutdown();
  }, 10_000);

  it('a TimerSet of one copy runs on a wheel of the other', () => {
    const clockB = new copyB.ManualClock(0);
    const expired: string[] = [];
    const setA = new copyA.TimerSet<number>({
      wheel: new copyB.TimingWheel({ clock: clockB }),
      onExpire: (key) => expired.push(`A:${String(key)}`),
    });
    setA.set('buff', 100, 1);
    const clockA = new copyA.ManualClock(0);
    const setB = new copyB.TimerSet<number>({
      wheel: new copyA.TimingWheel({ clock: clockA }),
      onExpire: (key) => expired.push(`B:${String(key)}`),
    });
    setB.set('buff', 50, 1);
    clockB.advance(100);
    clockA.advance(50);
    expect(expired).toEqual(['A:buff', 'B:buff']);
  });

  it("names the option and the value's type when the wheel is not one, never its contents", () => {
    class NotAWheel {
      readonly secret = 'hunter2';
    }
    expect(() => new copyA.TimerSet({ wheel: new NotAWheel() as never, onExpire: () => undefined })).toThrow(
      'wheel must be a TimingWheel, got an object (NotAWheel)',
    );
    expect(() => withTimeouts(fetch, { wheel: new NotAWheel() as never })).toThrow(
      /wheel must be a TimingWheel, got an object \(NotAWheel\)$/,
    );
  });
});
