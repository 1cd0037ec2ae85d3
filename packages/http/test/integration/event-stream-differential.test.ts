// Transparency of eventStream: with every option on and nothing due, a stream gives the same bytes as the
// hand-written SSE response, and leaves no own property on the request, the response or the socket.
import http from 'node:http';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { eventStream, serverTimeouts, type EventStreamOptions } from '../../src/index.js';
import { get, loopback } from '../helpers/loopback.js';

const net = loopback();

/** Every option on, none due during the exchange. */
const EVERY_OPTION: EventStreamOptions = {
  heartbeatMs: 60_000,
  maxStreamMs: 600_000,
  streamJitter: 0.5,
  retryMs: 10,
  maxBufferedBytes: 1 << 20,
  drainTimeoutMs: 1_000,
};

/** Own property names of what the request touched, once the response closed. */
interface Shapes {
  req: string[];
  res: string[];
  socket: string[];
}

async function exchange(
  write: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  withTimeouts: boolean,
): Promise<{ bytes: string; shapes: Shapes }> {
  let shapes!: Promise<Shapes>;
  const server = http.createServer((req, res) => {
    shapes = new Promise((resolve) =>
      res.on('close', () =>
        setImmediate(() =>
          resolve({
            req: Object.getOwnPropertyNames(req).sort(),
            res: Object.getOwnPropertyNames(res).sort(),
            socket: Object.getOwnPropertyNames(req.socket).sort(),
          }),
        ),
      ),
    );
    write(req, res);
  });
  if (withTimeouts) serverTimeouts(server, { defaultTimeoutMs: 60_000, keepAliveMs: 5_000 });
  const client = await net.connect(await net.listen(server));
  client.write(get('/events', { Connection: 'close' }));
  const bytes = (await client.whenClosed()).replace(/Date: [^\r]+\r\n/, 'Date: <masked>\r\n');
  return { bytes, shapes: await shapes };
}

describe('eventStream is invisible when nothing is due', () => {
  for (const withTimeouts of [false, true]) {
    it(`gives the hand-written stream's bytes and object shapes${withTimeouts ? ', under serverTimeouts' : ''}`, async () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const bare = await exchange((_req, res) => {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          'x-accel-buffering': 'no',
        });
        res.flushHeaders();
        res.write('id: 1\nevent: pair\ndata: a\ndata: b\n\n');
        res.write(': note\n\n');
        res.end();
      }, withTimeouts);
      const ours = await exchange((req, res) => {
        const stream = eventStream(req, res, { ...EVERY_OPTION, wheel });
        stream.send('a\nb', { event: 'pair', id: '1' });
        stream.comment('note');
        stream.close();
      }, withTimeouts);
      expect(bare.bytes).toContain('data: a\ndata: b');
      expect(ours.bytes).toBe(bare.bytes);
      expect(ours.shapes).toEqual(bare.shapes);
      expect(wheel.size).toBe(0);
      wheel.close();
    });
  }
});
