import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { guardedPublisher, typedChannel } from '../src/kit/channel-kit.js';

describe('channel kit', () => {
  it('typedChannel is the process-wide channel of that name', () => {
    expect(typedChannel('tickwheel:test:kit-same')).toBe(diagnosticsChannel.channel('tickwheel:test:kit-same'));
  });

  it('builds no message while nobody listens, and publishes what the builder returns once someone does', () => {
    const name = 'tickwheel:test:kit-publish';
    const channel = typedChannel<{ a: number; b: string; sum: number }>(name);
    const calls: unknown[][] = [];
    const publish = guardedPublisher(channel, (a: number, b: string, c: number) => {
      calls.push([a, b, c]);
      return { a, b, sum: a + c };
    });
    publish(1, 'x', 2);
    expect(calls).toEqual([]);

    const messages: unknown[] = [];
    const listener = (message: unknown) => messages.push(message);
    diagnosticsChannel.subscribe(name, listener);
    try {
      publish(3, 'y', 4);
    } finally {
      diagnosticsChannel.unsubscribe(name, listener);
    }
    expect(calls).toEqual([[3, 'y', 4]]);
    expect(messages).toEqual([{ a: 3, b: 'y', sum: 7 }]);

    publish(5, 'z', 6); // unsubscribed again: nothing built
    expect(calls).toHaveLength(1);
  });

  it('passes all six arguments through', () => {
    const name = 'tickwheel:test:kit-six';
    const publish = guardedPublisher(
      typedChannel<number[]>(name),
      (a: number, b: number, c: number, d: number, e: number, f: number) => [a, b, c, d, e, f],
    );
    const messages: unknown[] = [];
    const listener = (message: unknown) => messages.push(message);
    diagnosticsChannel.subscribe(name, listener);
    try {
      publish(1, 2, 3, 4, 5, 6);
    } finally {
      diagnosticsChannel.unsubscribe(name, listener);
    }
    expect(messages).toEqual([[1, 2, 3, 4, 5, 6]]);
  });

  it('refuses a builder of more than six parameters with a RangeError naming the count', () => {
    const build = (a: number, b: number, c: number, d: number, e: number, f: number, g: number) =>
      a + b + c + d + e + f + g;
    expect(() => guardedPublisher(typedChannel<number>('tickwheel:test:kit-seven'), build)).toThrow(
      new RangeError('guardedPublisher: a message builder takes at most 6 arguments, got 7'),
    );
  });
});
