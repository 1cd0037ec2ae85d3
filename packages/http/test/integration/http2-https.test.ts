// serverTimeouts on node:https and node:http2 (h2c, and TLS with allowHTTP1): the handler deadline per request or stream.
import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import { ManualClock, TimingWheel, currentDeadline } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { serverTimeouts } from '../../src/index.js';
import type { TimeoutEvent } from '../../src/index.js';
import { get, loopback, turns } from '../helpers/loopback.js';

const net = loopback();
const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
const key = fs.readFileSync(path.join(fixtures, 'localhost-key.pem'));
const cert = fs.readFileSync(path.join(fixtures, 'localhost-cert.pem'));

const sessions: http2.ClientHttp2Session[] = [];
afterEach(() => {
  for (const session of sessions.splice(0)) session.destroy();
});

function manualWheel() {
  const clock = new ManualClock(0);
  return { clock, wheel: new TimingWheel({ clock }) };
}

interface H2Result {
  status?: number;
  body: string;
  error?: string;
  ended: boolean;
}

/** One HTTP/2 request; resolves when its stream closes, however. */
function h2Request(session: http2.ClientHttp2Session, urlPath: string, onResponse?: () => void): Promise<H2Result> {
  return new Promise((resolve) => {
    const result: H2Result = { body: '', ended: false };
    const stream = session.request({ ':path': urlPath });
    stream.setEncoding('utf8');
    stream.on('response', (headers) => {
      result.status = Number(headers[':status']);
      onResponse?.();
    });
    stream.on('data', (chunk: string) => (result.body += chunk));
    stream.on('end', () => (result.ended = true));
    stream.on('error', (error: NodeJS.ErrnoException) => (result.error = error.code));
    stream.on('close', () => resolve(result));
  });
}

describe('node:http2 compatibility API', () => {
  it('answers a stream whose deadline passed with 503, and drops the late writes without an error', async () => {
    const { clock, wheel } = manualWheel();
    const errors: unknown[] = [];
    let late!: () => void;
    const seen: Array<number | undefined> = [];
    const server = http2.createServer((_req, res) => {
      seen.push(currentDeadline()?.remaining());
      late = () => {
        for (const call of [() => res.writeHead(200), () => res.write('late'), () => res.end('late')]) {
          try {
            call();
          } catch (error) {
            errors.push(error);
          }
        }
      };
    });
    const events: TimeoutEvent[] = [];
    serverTimeouts(server, { defaultTimeoutMs: 500, wheel }).on('timeout', (event) => events.push(event));
    const port = await net.listen(server);
    const session = http2.connect(`http://127.0.0.1:${port}`);
    sessions.push(session);
    const pending = h2Request(session, '/slow');
    while (seen.length === 0) await turns();
    clock.advance(500);
    const result = await pending;
    late();
    await turns(10);
    expect(seen).toEqual([500]);
    expect(result).toMatchObject({
      status: 503,
      body: "Service Unavailable: the request's deadline passed\n",
      ended: true,
    });
    expect(errors).toEqual([]);
    expect(events.map((e) => [e.kind, e.outcome])).toEqual([['handler', 'answered']]);
    // The session lives on: the next stream is served.
    const again = h2Request(session, '/slow');
    while (seen.length === 1) await turns();
    clock.advance(500);
    expect((await again).status).toBe(503);
  });

  it('resets a stream whose response had started', async () => {
    const { clock, wheel } = manualWheel();
    const server = http2.createServer((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    serverTimeouts(server, { defaultTimeoutMs: 100, wheel });
    const port = await net.listen(server);
    const session = http2.connect(`http://127.0.0.1:${port}`);
    sessions.push(session);
    let responded = false;
    const pending = h2Request(session, '/stream', () => (responded = true));
    while (!responded) await turns();
    await turns(5);
    clock.advance(100);
    const result = await pending;
    expect(result.status).toBe(200);
    expect(result.ended).toBe(false);
    expect(result.error).toBe('ERR_HTTP2_STREAM_ERROR');
  });

  it('serves HTTP/1.1 and HTTP/2 on one TLS server with allowHTTP1, with HTTP/1 limits for HTTP/1 connections only', async () => {
    const { clock, wheel } = manualWheel();
    const server = http2.createSecureServer({ key, cert, allowHTTP1: true }, () => {});
    serverTimeouts(server, { defaultTimeoutMs: 300, headersMs: 200, wheel });
    const port = await net.listen(server);
    // HTTP/1.1 over TLS: the head limit, then the handler deadline.
    const slowHead = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    await new Promise((resolve) => slowHead.once('secureConnect', resolve));
    let headAnswer = '';
    slowHead.setEncoding('latin1').on('data', (chunk: string) => (headAnswer += chunk));
    const headClosed = new Promise((resolve) => slowHead.once('close', resolve));
    slowHead.write('GET / HTTP/1.1\r\n');
    await turns(10);
    clock.advance(200);
    await headClosed;
    expect(headAnswer).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    const h1 = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    await new Promise((resolve) => h1.once('secureConnect', resolve));
    let h1Answer = '';
    h1.setEncoding('latin1').on('data', (chunk: string) => (h1Answer += chunk));
    const h1Closed = new Promise((resolve) => h1.once('close', resolve));
    h1.write(get('/'));
    await turns(10);
    clock.advance(300);
    await h1Closed;
    expect(h1Answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    // HTTP/2 on the same server: no head limit on the session, the handler deadline per stream.
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    sessions.push(session);
    await new Promise((resolve) => session.once('connect', resolve));
    clock.advance(1_000);
    const pending = h2Request(session, '/');
    await turns(20);
    clock.advance(300);
    expect((await pending).status).toBe(503);
  });
});

describe('node:https', () => {
  it('answers 503 at the deadline and gives the handler its deadline', async () => {
    const { clock, wheel } = manualWheel();
    const seen: Array<number | undefined> = [];
    const server = https.createServer({ key, cert }, (req, res) => {
      seen.push(currentDeadline()?.remaining());
      if (req.url === '/fast') res.end('fast');
    });
    serverTimeouts(server, { defaultTimeoutMs: 250, wheel });
    const port = await net.listen(server);
    const socket = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false });
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    let answer = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (answer += chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(get('/fast'));
    while (!answer.endsWith('fast')) await turns();
    socket.write(get('/slow'));
    while (seen.length < 2) await turns();
    clock.advance(250);
    await closed;
    expect(seen).toEqual([250, 250]);
    expect(answer).toMatch(/fastHTTP\/1\.1 503 Service Unavailable\r\n/);
  });
});
