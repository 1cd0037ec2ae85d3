// The internal hooks for responses that outlive the handler deadline (event streams): releaseDeadline and onDrain.
import { currentDeadline } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { onDrain, releaseDeadline } from '../../src/stream-hooks.js';
import { get, loopback, turns } from '../helpers/loopback.js';
import { timedServer } from '../helpers/timed-server.js';

const net = loopback();

describe('releaseDeadline', () => {
  it('takes a started response out of the handler deadline: never cut, no deadline ambient, no timeout reported', async () => {
    const seen: Array<number | undefined> = [];
    const t = await timedServer(
      net,
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        expect(releaseDeadline(res)).toBe(true);
        seen.push(currentDeadline()?.remaining());
        res.write('data: 1\n\n');
      },
      { defaultTimeoutMs: 100 },
    );
    const client = await net.connect(t.port);
    client.write(get('/events'));
    await client.waitFor(/data: 1\n\n/);
    t.clock.advance(10_000);
    await turns();
    expect(client.closed).toBe(false);
    expect(seen).toEqual([undefined]);
    expect(t.events).toEqual([]);
  });

  it('answers false for a response no deadline of ours is on', () => {
    expect(releaseDeadline({} as never)).toBe(false);
    expect(onDrain({} as never, () => {})).toBe(false);
  });
});

describe('onDrain', () => {
  it('ends a released stream as soon as close() begins, not at the grace', async () => {
    const t = await timedServer(
      net,
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        releaseDeadline(res);
        onDrain(res, () => res.end('event: bye\n\n'));
        res.write('data: 1\n\n');
      },
      { defaultTimeoutMs: 100 },
    );
    const client = await net.connect(t.port);
    client.write(get('/events'));
    await client.waitFor(/data: 1\n\n/);
    const closing = t.timeouts.close({ graceMs: 60_000 });
    expect(await client.waitFor(/event: bye\n\n/)).toContain('data: 1');
    await closing;
    expect(t.events).toEqual([]);
  });

  it('calls a hook registered after the drain began at once', async () => {
    let ended = 0;
    let release!: () => void;
    const t = await timedServer(net, (_req, res) => {
      release = () => {
        onDrain(res, () => {
          ended++;
          res.end('bye');
        });
      };
    });
    const client = await net.connect(t.port);
    client.write(get('/late'));
    await t.arrived();
    const closing = t.timeouts.close({ graceMs: 60_000 });
    release();
    await client.waitFor(/bye$/);
    await closing;
    expect(ended).toBe(1);
  });
});
