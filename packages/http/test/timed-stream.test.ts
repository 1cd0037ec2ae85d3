import diagnosticsChannel from 'node:diagnostics_channel';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { HTTP_EVENT_STREAM_END_CHANNEL, type HttpEventStreamEndMessage } from '../src/channels.js';
import { streamPlan } from '../src/event-stream-options.js';
import { TimedStream, type StreamSink } from '../src/timed-stream.js';
import type { EventStreamOptions } from '../src/types.js';

/** A target that records what the stream did to it; `behind` is what it reports as buffered. */
class FakeSink {
  written: string[] = [];
  ended: string | undefined | null = null;
  destroyed = false;
  released = 0;
  behind = 0;
  writeResult = true;

  write(text: string): boolean {
    this.written.push(text);
    return this.writeResult;
  }
  bufferedBytes(): number {
    return this.behind;
  }
  end(last: string | undefined): void {
    this.ended = last;
  }
  destroy(): void {
    this.destroyed = true;
  }
  release(): void {
    this.released++;
  }
}

/** The sink of FakeSink targets. */
const FAKE: StreamSink<FakeSink> = {
  write: (sink, text) => sink.write(text),
  bufferedBytes: (sink) => sink.bufferedBytes(),
  end: (sink, last) => sink.end(last),
  destroy: (sink) => sink.destroy(),
  release: (sink) => sink.release(),
};

let wheel: TimingWheel;
let clock: ManualClock;

afterEach(() => wheel?.close());

function open(
  options: EventStreamOptions = {},
  join: (stream: TimedStream<FakeSink>) => void = () => {},
  random = () => 0.5,
) {
  clock = new ManualClock(0);
  wheel = new TimingWheel({ clock });
  const sink = new FakeSink();
  const stream = new TimedStream(streamPlan({ wheel, ...options }), FAKE, sink, undefined);
  stream.start(join, random);
  return { stream, sink };
}

describe('TimedStream', () => {
  describe('heartbeat', () => {
    it('writes a comment after heartbeatMs of silence, and again after each further heartbeatMs', () => {
      const { sink } = open({ heartbeatMs: 1000 });
      clock.advance(999);
      expect(sink.written).toEqual([]);
      clock.advance(1);
      expect(sink.written).toEqual([':\n\n']);
      clock.advance(1000);
      expect(sink.written).toEqual([':\n\n', ':\n\n']);
    });

    it('writes none while events flow, counting silence from the last write', () => {
      const { stream, sink } = open({ heartbeatMs: 1000 });
      for (let i = 0; i < 10; i++) {
        clock.advance(600);
        stream.send(`e${i}`);
      }
      expect(sink.written.filter((w) => w.startsWith(':'))).toEqual([]);
      clock.advance(999);
      expect(sink.written.at(-1)).toBe('data: e9\n\n');
      clock.advance(1);
      expect(sink.written.at(-1)).toBe(':\n\n');
    });

    it('keeps one wheel handle per stream, however many events it sends', () => {
      const { stream } = open({ heartbeatMs: 1000 });
      expect(wheel.size).toBe(1);
      for (let i = 0; i < 100; i++) stream.send('x');
      expect(wheel.size).toBe(1);
    });

    it('writes none with heartbeatMs off, and holds no handle then', () => {
      const { sink } = open({ heartbeatMs: 0 });
      expect(wheel.size).toBe(0);
      clock.advance(1e9);
      expect(sink.written).toEqual([]);
    });
  });

  describe('maxStreamMs', () => {
    it('ends the stream after it with a retry field', async () => {
      const { stream, sink } = open({ heartbeatMs: 0, maxStreamMs: 5000, retryMs: 1500 });
      clock.advance(4999);
      expect(sink.ended).toBe(null);
      clock.advance(1);
      expect(sink.ended).toBe('retry: 1500\n\n');
      await expect(stream.ended).resolves.toEqual({ reason: 'max-age' });
      expect(wheel.size).toBe(0);
    });

    it('spreads ages uniformly over [max × (1 − jitter), max] (ws lifetimeJitter)', () => {
      const ends: number[] = [];
      for (const r of [0, 0.5, 0.999999]) {
        const { sink } = open({ heartbeatMs: 0, maxStreamMs: 10_000, streamJitter: 0.2 }, undefined, () => r);
        while (sink.ended === null) clock.advance(1);
        ends.push(clock.now());
        wheel.close();
      }
      expect(ends).toEqual([8000, 9000, 10_000]);
    });

    it('still comes while events flow', () => {
      const { stream, sink } = open({ heartbeatMs: 1000, maxStreamMs: 3000 });
      for (let i = 0; i < 30; i++) {
        clock.advance(100);
        stream.send('x');
      }
      expect(sink.ended).toBe('retry: 3000\n\n');
    });
  });

  describe('slow consumer', () => {
    it('cuts a client still more than maxBufferedBytes behind drainTimeoutMs after it was first seen so', async () => {
      const { stream, sink } = open({ heartbeatMs: 0, maxBufferedBytes: 100, drainTimeoutMs: 1000 });
      sink.behind = 101;
      sink.writeResult = false;
      expect(stream.send('x')).toBe(false);
      clock.advance(999);
      expect(sink.destroyed).toBe(false);
      clock.advance(1);
      expect(sink.destroyed).toBe(true);
      await expect(stream.ended).resolves.toEqual({ reason: 'slow-consumer' });
      expect(wheel.size).toBe(0);
    });

    it('forgives a client that caught up by the check', () => {
      const { stream, sink } = open({ heartbeatMs: 0, maxBufferedBytes: 100, drainTimeoutMs: 1000 });
      sink.behind = 500;
      stream.send('x');
      sink.behind = 0;
      clock.advance(1000);
      expect(sink.destroyed).toBe(false);
      expect(wheel.size).toBe(0);
      expect(stream.open).toBe(true);
    });
  });

  describe('#end', () => {
    it('ends once, releases the sink, aborts the signal and settles ended', async () => {
      const { stream, sink } = open();
      const signal = stream.signal;
      stream.close();
      stream.close();
      expect(sink.released).toBe(1);
      expect(sink.ended).toBe(undefined);
      expect(signal.aborted).toBe(true);
      expect((signal.reason as DOMException).name).toBe('AbortError');
      await expect(stream.ended).resolves.toEqual({ reason: 'closed' });
      expect(stream.send('late')).toBe(false);
      expect(stream.comment('late')).toBe(false);
      expect(sink.written).toEqual([]);
      expect(wheel.size).toBe(0);
    });

    it('gives an aborted signal and a settled ended when asked after the end', async () => {
      const { stream } = open();
      stream.end('client-gone');
      expect(stream.signal.aborted).toBe(true);
      await expect(stream.ended).resolves.toEqual({ reason: 'client-gone' });
    });

    it('writes nothing to a client that is gone', () => {
      const { stream, sink } = open();
      stream.end('client-gone');
      expect(sink.ended).toBe(null);
      expect(sink.destroyed).toBe(false);
    });

    it('reports every end on tickwheel:http:event-stream-end with its age', () => {
      const messages: HttpEventStreamEndMessage[] = [];
      const listener = (message: unknown): void => void messages.push(message as HttpEventStreamEndMessage);
      diagnosticsChannel.subscribe(HTTP_EVENT_STREAM_END_CHANNEL, listener);
      try {
        const { stream } = open();
        clock.advance(250);
        stream.close();
      } finally {
        diagnosticsChannel.unsubscribe(HTTP_EVENT_STREAM_END_CHANNEL, listener);
      }
      expect(messages).toEqual([{ reason: 'closed', ageMs: 250 }]);
    });
  });

  describe('#start', () => {
    it('lets the join end the stream at once (a drain under way), holding no handle then', () => {
      const { stream, sink } = open({ retryMs: 10, heartbeatMs: 1000 }, (s) => s.end('drain'));
      expect(stream.open).toBe(false);
      expect(sink.ended).toBe('retry: 10\n\n');
      expect(wheel.size).toBe(0);
    });
  });
});
