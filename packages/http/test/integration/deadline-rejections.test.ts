// Nothing of a deadline crashes the process or reaches an error handler: the handler's rejections that a deadline's abort causes, on node:http, express 4 and 5, fastify and koa, each app in its own process (test/fixtures/rejecting-app.mjs, run on the built packages).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';

const FIXTURE = path.resolve(__dirname, '../fixtures/rejecting-app.mjs');
const FRAMEWORKS = ['http', 'express4', 'express5', 'fastify', 'koa'] as const;
type Framework = (typeof FRAMEWORKS)[number];

interface AppEvent {
  event: string;
  name?: string;
  message?: string;
  code?: string;
  port?: number;
}

interface RunningApp {
  child: ChildProcess;
  port: number;
  events: AppEvent[];
  stderr: () => string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function startApp(framework: Framework, handler: string, timed: 'tickwheel' | 'bare'): Promise<RunningApp> {
  const child = spawn(process.execPath, [FIXTURE, framework, handler, timed], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  const events: AppEvent[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const port = await new Promise<number>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const event = JSON.parse(line) as AppEvent;
      if (event.event === 'listening') resolve(event.port!);
      else events.push(event);
    });
    void exited.then((code) => reject(new Error(`the app exited (${code}) before listening: ${stderr}`)));
  });
  return { child, port, events, stderr: () => stderr, exited };
}

/** GET `path`; resolves with the status, or 'closed' when the connection ended without a response. */
function request(port: number, urlPath: string): Promise<number | 'closed'> {
  return new Promise((resolve) => {
    http
      .get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      })
      .on('error', () => resolve('closed'));
  });
}

/** A client that sends GET /work and goes away 50 ms later, before any answer. */
async function clientGoesAway(port: number): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write('GET /work HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => setTimeout(resolve, 50));
  socket.destroy();
}

/** Ends the app (stdin closed) and resolves with its exit code. */
async function stop(app: RunningApp): Promise<number | null> {
  // Time for the rejections of the last request to settle and for anything late to print.
  await new Promise((resolve) => setTimeout(resolve, 100));
  app.child.stdin!.end();
  return app.exited;
}

/**
 * What the app's error handlers see of an ended request, beyond which nothing may reach them:
 * fastify and koa answer the timeout through their own error path, once (as fastify's own
 * handlerTimeout does); express 5 hands every rejection of a handler to the error handlers itself,
 * after the answer (`res.headersSent`), which no middleware before the handler can intercept.
 */
function errorHandlerCalls(framework: Framework, handler: 'await' | 'catch'): unknown[] {
  const timeout = { event: 'error-handler', message: 'Response timeout' };
  if (framework === 'fastify' || framework === 'koa') return [expect.objectContaining(timeout)];
  if (framework === 'express5' && handler === 'await') {
    return [
      expect.objectContaining({ event: 'error-handler', name: 'TimeoutError' }),
      expect.objectContaining({ event: 'error-handler', name: 'AbortError' }),
    ];
  }
  return [];
}

describe('a handler rejection caused by its deadline', () => {
  it.each(FRAMEWORKS)(
    '%s: awaited without try/catch, after a timeout answer and after the client went away, crashes nothing and reaches no error handler (express 5: only its own)',
    async (framework) => {
      const app = await startApp(framework, 'await', 'tickwheel');
      expect(await request(app.port, '/work')).toBe(503);
      await clientGoesAway(app.port);
      expect(await request(app.port, '/ok')).toBe(200);
      expect(await stop(app)).toBe(0);
      expect(app.stderr()).toBe('');
      expect(app.events).toEqual(errorHandlerCalls(framework, 'await'));
    },
    15_000,
  );

  it.each(FRAMEWORKS)(
    '%s: caught by the handler, whose late answer is dropped, crashes nothing and reaches no error handler',
    async (framework) => {
      const app = await startApp(framework, 'catch', 'tickwheel');
      expect(await request(app.port, '/work')).toBe(503);
      await clientGoesAway(app.port);
      expect(await request(app.port, '/ok')).toBe(200);
      expect(await stop(app)).toBe(0);
      expect(app.stderr()).toBe('');
      expect(app.events).toEqual(errorHandlerCalls(framework, 'catch'));
    },
    15_000,
  );
});

describe('an unrelated error of the handler', () => {
  it.each(FRAMEWORKS)(
    '%s: behaves as it does without tickwheel (status or crash, error handlers, exit code)',
    async (framework) => {
      const outcome = async (timed: 'tickwheel' | 'bare') => {
        const app = await startApp(framework, 'unrelated', timed);
        const status = await request(app.port, '/work');
        const crashed = status === 'closed';
        const code = crashed ? await app.exited : await stop(app);
        return { status, code, events: app.events, crashedWith: crashed && app.stderr().includes('unrelated failure') };
      };
      const bare = await outcome('bare');
      expect(await outcome('tickwheel')).toEqual(bare);
      if (framework === 'http' || framework === 'express4') expect(bare).toMatchObject({ code: 1, crashedWith: true });
      else expect(bare.events).toEqual([expect.objectContaining({ event: 'error-handler', name: 'TypeError' })]);
    },
    15_000,
  );
});
