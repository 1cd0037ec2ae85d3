import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { withTimeouts } from '../../../src/with-timeouts.js';
import { sseHead, useStreamUpstream, type Exchange } from '../../helpers/stream-upstream.js';

/*
 * @modelcontextprotocol/sdk's Streamable HTTP client transport with
 * `fetch: withTimeouts(fetch, ...)`, against a local server that speaks the transport's wire
 * format: JSON-RPC messages as `message` events of the POST's SSE answer, a session header, 202
 * for notifications, 405 for a GET without `Last-Event-ID`. The tool `stall` answers with a
 * resumable stream (a priming event with an id and `retry: 50`) that then sends only keep-alive
 * comments: the event-idle timeout ends it, and the transport resumes it with a GET carrying
 * `Last-Event-ID`, on which the server sends the result. The tool `slow` sends a log message
 * every 80 ms for a while, then its result.
 */

interface Rpc {
  readonly id?: number;
  readonly method: string;
  readonly params?: { name?: string; protocolVersion?: string };
}

const RESULT = { content: [{ type: 'text', text: 'done' }] };

function message(body: object, id?: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...body })}\n\n`;
}

/** The id of the stalled call, answered when the client resumes its stream. */
let stalledCall: number | undefined;

function mcp({ req, res, body, every, after }: Exchange): void {
  if (req.method === 'GET') {
    if (req.headers['last-event-id'] === undefined || stalledCall === undefined) {
      res.writeHead(405).end();
      return;
    }
    sseHead(res);
    res.end(message({ id: stalledCall, result: RESULT }, 'stall-2'));
    stalledCall = undefined;
    return;
  }
  if (req.method === 'DELETE') {
    res.writeHead(200).end();
    return;
  }
  const rpc = JSON.parse(body) as Rpc;
  if (rpc.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  if (rpc.method === 'initialize') {
    res.setHeader('mcp-session-id', 'session-1');
    sseHead(res);
    const result = {
      protocolVersion: rpc.params?.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'local', version: '1.0.0' },
    };
    res.end(message({ id: rpc.id, result }));
    return;
  }
  sseHead(res);
  if (rpc.params?.name === 'stall') {
    stalledCall = rpc.id;
    res.write('id: stall-1\nretry: 50\ndata:\n\n');
    every(20, () => res.write(': keep-alive\n\n'));
    return;
  }
  let logs = 0;
  const next = (): void => {
    if (logs++ < 5) {
      res.write(message({ method: 'notifications/message', params: { level: 'info', data: `step ${logs}` } }));
      after(80, next);
    } else {
      res.end(message({ id: rpc.id, result: RESULT }));
    }
  };
  next();
}

describe('the @modelcontextprotocol/sdk Streamable HTTP transport through withTimeouts(fetch)', () => {
  const { base, upstream } = useStreamUpstream({ '/mcp': mcp });
  let wheel: TimingWheel;
  let client: Client;

  afterEach(async () => {
    await client.close();
    await expect.poll(() => wheel.size).toBe(0);
    wheel.close();
  });

  async function connect(errors: Error[]): Promise<Client> {
    wheel = new TimingWheel();
    client = new Client({ name: 'tickwheel-test', version: '1.0.0' });
    client.onerror = (error) => errors.push(error);
    const transport = new StreamableHTTPClientTransport(new URL(`${base()}/mcp`), {
      fetch: withTimeouts(fetch, { bodyIdleMs: 100, eventIdleMs: 250, wheel }),
    });
    await client.connect(transport);
    return client;
  }

  it('ends a tool call stream stalled behind keep-alive comments in eventIdleMs, and the transport resumes it with Last-Event-ID', async () => {
    const errors: Error[] = [];
    await connect(errors);
    const abandoned = upstream().abandoned;
    const started = performance.now();
    const result = await client.callTool({ name: 'stall', arguments: {} });
    expect(result).toEqual(RESULT);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringMatching(/^SSE stream disconnected: TimeoutError: .*no progress event for 250 ms \(eventIdleMs\)$/),
    ]);
    expect(upstream().abandoned).toBe(abandoned + 1);
    expect(upstream().requests.at(-1)).toMatchObject({ method: 'GET', headers: { 'last-event-id': 'stall-1' } });
  }, 10_000);

  it('lets a slow tool call whose stream keeps sending messages finish', async () => {
    const errors: Error[] = [];
    await connect(errors);
    expect(await client.callTool({ name: 'slow', arguments: {} })).toEqual(RESULT);
    expect(errors).toEqual([]);
  }, 10_000);
});
