import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { codeBlocks } from './readme-blocks.js';

/**
 * The HTTP README examples run, not only type-checked: each block as written, from the installed
 * tarballs, with only its addresses replaced by loopback ports (a slow downstream that never
 * answers, the server on an ephemeral port), under the conditions it is for: a request past its
 * deadline, a client that goes away, and a server sent SIGTERM mid-request. The process must
 * survive each (no unhandled rejection) and drain on SIGTERM.
 */
const workspace = path.resolve(import.meta.dirname, '../..');
const root = inject('consumerRoot');

/** The block of `readme` that contains `marker`. */
function block(readme: string, marker: string): string {
  const found = codeBlocks(readme, fs.readFileSync(path.join(workspace, readme), 'utf8')).find((b) =>
    b.code.includes(marker),
  );
  if (found === undefined) throw new Error(`${readme}: no block with ${marker}`);
  return found.code;
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const downstream = http.createServer(() => {});
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  downstream.closeAllConnections();
  if (downstream.listening) await new Promise((resolve) => downstream.close(resolve));
});

/** Writes `code` into the consumer project as `name` and runs it; resolves once `port` accepts connections. */
async function run(name: string, code: string, port: number): Promise<{ child: ChildProcess; stderr: () => string }> {
  const file = path.join(root, name);
  fs.writeFileSync(file, code);
  const child = spawn(process.execPath, [file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout!.resume();
  for (let tries = 0; ; tries++) {
    const socket = net.connect(port, '127.0.0.1');
    const connected = await new Promise<boolean>((resolve) => {
      socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    });
    socket.destroy();
    if (connected) break;
    if (child.exitCode !== null || tries > 200) throw new Error(`${name} did not listen: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, stderr: () => stderr };
}

/** GET / on `port`: the status and the ms it took, or 'closed'. */
function get(port: number): Promise<{ status: number | 'closed'; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }));
      })
      .on('error', () => resolve({ status: 'closed', ms: performance.now() - started }));
  });
}

/** A client that sends GET / and goes away 100 ms later. */
async function clientGoesAway(port: number): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.destroy();
}

describe('the root README’s @tickwheel/http example, run as written', () => {
  it('answers 503 at its 2 s deadline, outlives a client that goes away, and drains on SIGTERM mid-request', async () => {
    downstream.listen(0, '127.0.0.1');
    await once(downstream, 'listening');
    const downstreamPort = (downstream.address() as net.AddressInfo).port;
    const port = await freePort();
    const code = block('README.md', "from '@tickwheel/http'")
      .replaceAll('127.0.0.1:8081', `127.0.0.1:${downstreamPort}`)
      .replace('server.listen(8080)', `server.listen(${port}, '127.0.0.1')`);
    const app = await run('readme-root-http.mjs', code, port);
    const first = await get(port);
    expect(first.status).toBe(503);
    expect(first.ms).toBeGreaterThanOrEqual(1_900);
    await clientGoesAway(port);
    const inFlight = get(port);
    await new Promise((resolve) => setTimeout(resolve, 200));
    app.child.kill('SIGTERM');
    expect((await inFlight).status).toBe(503);
    const [exitCode] = (await once(app.child, 'exit')) as [number | null];
    expect(exitCode).toBe(0);
    expect(app.stderr()).toContain('handler limit of 2000 ms');
    expect(app.stderr()).not.toMatch(/Error|Unhandled/);
  });
});

describe('packages/http/README.md, run as written', () => {
  it('the usage example answers with the ms left and drains on SIGTERM', async () => {
    const port = await freePort();
    const code = block('packages/http/README.md', 'serverTimeouts(server,').replace(
      'server.listen(8080)',
      `server.listen(${port}, '127.0.0.1')`,
    );
    const app = await run('readme-http-usage.mjs', code, port);
    expect((await get(port)).status).toBe(200);
    app.child.kill('SIGTERM');
    const [exitCode] = (await once(app.child, 'exit')) as [number | null];
    expect(exitCode).toBe(0);
    expect(app.stderr()).toBe('');
  });

  it('the deadline inside the handler: its fetch cut at the deadline and when the client goes away, the process unharmed', async () => {
    downstream.listen(0, '127.0.0.1');
    await once(downstream, 'listening');
    const downstreamPort = (downstream.address() as net.AddressInfo).port;
    const port = await freePort();
    const fragment = block('packages/http/README.md', 'const timedFetch = withTimeouts(fetch, { totalMs: 10_000 });')
      .replaceAll('http://prices.internal/', `http://127.0.0.1:${downstreamPort}/`)
      .replaceAll('http://audit.internal/', `http://127.0.0.1:${downstreamPort}/`);
    const lines = fragment.split('\n').filter((line) => !line.startsWith('// fragment:'));
    const imports = lines.filter((line) => line.startsWith('import '));
    const body = lines.filter((line) => !line.startsWith('import '));
    // The fragment is the body of a request handler, on a server with serverTimeouts attached (its first line).
    const code = [
      "import http from 'node:http';",
      "import { serverTimeouts } from '@tickwheel/http';",
      ...imports,
      'const server = http.createServer(async (req, res) => {',
      ...body.map((line) => `  ${line}`),
      "  res.end('ok');",
      '});',
      'serverTimeouts(server, { defaultTimeoutMs: 1_000 });',
      `server.listen(${port}, '127.0.0.1');`,
      "process.once('SIGTERM', () => server.close());",
    ].join('\n');
    const app = await run('readme-http-handler.mjs', code, port);
    const first = await get(port);
    expect(first.status).toBe(503);
    await clientGoesAway(port);
    expect((await get(port)).status).toBe(503);
    app.child.kill('SIGTERM');
    downstream.closeAllConnections();
    const [exitCode] = (await once(app.child, 'exit')) as [number | null];
    expect(exitCode).toBe(0);
    expect(app.stderr()).not.toMatch(/Error|Unhandled/);
  });
});
