import { describe, expect, it } from 'vitest';
import { EventScanner, LINES, NOT_A_STREAM, SSE, streamKindOf } from '../src/event-scanner.js';
import type { StreamEvent } from '../src/types.js';

const encoder = new TextEncoder();

type Chunk = string | Uint8Array;

function bytes(chunk: Chunk): Uint8Array {
  return typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
}

/** The events a custom isProgress sees when `chunks` are scanned in turn (each counts as progress). */
function events(chunks: readonly Chunk[], kind: typeof SSE | typeof LINES = SSE): StreamEvent[] {
  const seen: StreamEvent[] = [];
  const scanner = new EventScanner(kind, (event) => {
    seen.push(event);
    return true;
  });
  for (const chunk of chunks) scanner.scan(bytes(chunk));
  return seen;
}

/** How many progress events the default scan finds in `stream`, fed one byte at a time (one event per byte at most). */
function defaultCount(stream: Uint8Array, kind: typeof SSE | typeof LINES = SSE): number {
  const scanner = new EventScanner(kind, undefined);
  let count = 0;
  for (let i = 0; i < stream.length; i++) if (scanner.scan(stream.subarray(i, i + 1))) count++;
  return count;
}

/** The whole stream of `chunks` as bytes. */
function joined(chunks: readonly Chunk[]): Uint8Array {
  const parts = chunks.map(bytes);
  const whole = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
}

/** Which of `chunks` complete a progress event, by the default scan and by a custom isProgress that takes every event. */
function progressByChunk(
  chunks: readonly Uint8Array[],
  kind: typeof SSE | typeof LINES,
): { byDefault: boolean[]; byEvents: boolean[] } {
  const byDefault = new EventScanner(kind, undefined);
  const byEvents = new EventScanner(kind, () => true);
  return { byDefault: chunks.map((c) => byDefault.scan(c)), byEvents: chunks.map((c) => byEvents.scan(c)) };
}

/**
 * Asserts what the scanner finds in `chunks` whatever their split: as given, at every split of
 * the whole into two and into three chunks, and one byte at a time; the default scan (no text
 * kept) must find progress in exactly the chunks where the events end.
 */
function expectEvents(chunks: readonly Chunk[], expected: ReadonlyArray<Partial<StreamEvent>>, kind = SSE): void {
  const streamKind = kind as typeof SSE;
  const found = events(chunks, streamKind);
  expect(found).toHaveLength(expected.length);
  expected.forEach((event, i) => expect(found[i]).toMatchObject(event));
  const whole = joined(chunks);
  const splits: Uint8Array[][] = [chunks.map(bytes)];
  for (let cut = 0; cut <= whole.length; cut++) {
    splits.push([whole.subarray(0, cut), whole.subarray(cut)]);
    const second = Math.min(whole.length, cut + 1 + (cut % 7));
    splits.push([whole.subarray(0, cut), whole.subarray(cut, second), whole.subarray(second)]);
  }
  for (const split of splits) {
    expect(events(split, streamKind)).toEqual(found);
    const { byDefault, byEvents } = progressByChunk(split, streamKind);
    expect(byDefault).toEqual(byEvents);
  }
  expect(defaultCount(whole, streamKind)).toBe(found.length);
}

describe('streamKindOf', () => {
  it('knows event streams and NDJSON by their essence, with parameters and in any case', () => {
    expect(streamKindOf('text/event-stream')).toBe(SSE);
    expect(streamKindOf('Text/Event-Stream; charset=utf-8')).toBe(SSE);
    expect(streamKindOf(' text/event-stream ;charset=UTF-8')).toBe(SSE);
    expect(streamKindOf('application/x-ndjson')).toBe(LINES);
    expect(streamKindOf('application/jsonl; charset=utf-8')).toBe(LINES);
    expect(streamKindOf('APPLICATION/X-NDJSON')).toBe(LINES);
  });

  it('takes anything else for no stream', () => {
    for (const other of ['application/json', 'text/plain', 'text/event-streams', '', null, undefined]) {
      expect(streamKindOf(other)).toBe(NOT_A_STREAM);
    }
  });
});

// Translated from eventsource-parser (github.com/rexxars/eventsource-parser), test/parse.test.ts
// and its fixtures (test/fixtures.ts): the same streams, as the WHATWG parser dispatches them.
describe('EventScanner (eventsource-parser test/parse.test.ts)', () => {
  it('basic unnamed events stream', () => {
    const chunks = [
      'data: 0\n\n',
      'data: 1\n\n',
      'data: 2\n\n',
      'data: 3\n\n',
      'data: 4\n\n',
      'event: done\ndata: ✔\n\n',
    ];
    expectEvents(chunks, [
      { data: '0', event: 'message', id: '' },
      { data: '1' },
      { data: '2' },
      { data: '3' },
      { data: '4' },
      { event: 'done', data: '✔' },
    ]);
  });

  it('stream of identified messages + retry interval', () => {
    expectEvents(
      ['event: tick\nid: 1337\ndata: 1337\nretry: 50\n\n', 'event: tick\nid: 1338\ndata: 1338\nretry: 50\n\n'],
      [
        { id: '1337', event: 'tick', data: '1337' },
        { id: '1338', event: 'tick', data: '1338' },
      ],
    );
  });

  it('stream of "heartbeat" comments, unnamed events: comments are no events', () => {
    const chunks: string[] = [];
    for (let char = 65; char < 70; char++) chunks.push(': ♥\n\n', `data: ${String.fromCharCode(char)}\n\n`);
    chunks.push('event: done\ndata: ✔\n\n');
    expectEvents(chunks, [
      { data: 'A' },
      { data: 'B' },
      { data: 'C' },
      { data: 'D' },
      { data: 'E' },
      { event: 'done' },
    ]);
  });

  it('stream of multi-line data events', () => {
    expectEvents(
      ['event: stock\n', 'data: YHOO\n', 'data: +2\n', 'data: 10\n\n', 'event: stock\n', 'data: GOOG\n', 'data: -8\n'],
      [{ event: 'stock', data: 'YHOO\n+2\n10' }],
    );
  });

  it('stream of multi-byte events, split inside a character', () => {
    const line = 'Я не говорю по-русски 🦄🐴';
    const encoded = encoder.encode(`id: 7\ndata:${line}\n\n`);
    expectEvents([encoded.subarray(0, 20), encoded.subarray(20, 21), encoded.subarray(21)], [{ id: '7', data: line }]);
  });

  it('stream of multi-byte events with some empty lines thrown in', () => {
    expectEvents(
      ['\n\n\n\nid: 1\ndata: 我現在都看實況不玩遊戲\n\n', 'event: done\ndata: ✔\n\n'],
      [{ data: '我現在都看實況不玩遊戲' }, { event: 'done' }],
    );
  });

  it('stream of leading bom', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    expectEvents(
      [bom, 'data: bomful 1\n\n', 'data: bomless 2\n\n', 'event: done\ndata: ✔\n\n'],
      [{ data: 'bomful 1' }, { data: 'bomless 2' }, { event: 'done' }],
    );
  });

  it('stream containing byte-order mark (multiple places): only the leading one is skipped', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    expectEvents(
      [bom, 'data: bomful 1\n\n', bom, 'data: bomful 2\n\n', 'data: bomless 3\n\n', 'event: done\ndata: ✔\n\n'],
      [{ data: 'bomful 1' }, { data: 'bomless 3' }, { event: 'done' }],
    );
  });

  it('stream using carriage returns', () => {
    expectEvents(
      ['data: dog\r', 'data: bark\r\r', 'data: cat\r', 'data: meow\r\r', 'event: done\rdata: ✔\r\r'],
      [{ data: 'dog\nbark' }, { data: 'cat\nmeow' }, { event: 'done' }],
    );
  });

  it('stream using line feeds', () => {
    expectEvents(
      ['data: cow\n', 'data: moo\n\n', 'data: horse\n', 'data: neigh\n\n'],
      [{ data: 'cow\nmoo' }, { data: 'horse\nneigh' }],
    );
  });

  it('stream using carriage returns and line feeds', () => {
    expectEvents(
      ['data: sheep\r\n', 'data: bleat\r\n\r\n', 'data: pig\r\n', 'data: oink\r\n\r\n'],
      [{ data: 'sheep\nbleat' }, { data: 'pig\noink' }],
    );
  });

  it('stream with varying odd uses of comments', () => {
    expectEvents(
      [
        ': Hello\n\n',
        ':'.repeat(300),
        '\n',
        'data: First\n\n',
        ': Первый',
        ': 第二',
        '\n',
        'data: Second\n\n',
        ': Moop \n'.repeat(10),
        ':നാലാമത്തെ',
        '\n',
        'data: Third\n\n',
      ],
      [{ data: 'First' }, { data: 'Second' }, { data: 'Third' }],
    );
  });

  it('stream with even more odd uses of comments', () => {
    const long = 'x'.repeat(2 * 1024 + 1);
    expectEvents(
      ['data:1\r\r:\0\n:\r\ndata:2\n\n:', long, '\rdata:3\n\n:data:fail\r:', long, '\ndata:4\n\n', 'data:5'],
      // No line end after the last one, thus not dispatched.
      [{ data: '1' }, { data: '2' }, { data: '3' }, { data: '4' }],
    );
  });

  it('stream with empty `event` field: the type is message', () => {
    expectEvents(
      ['event:\ndata: Hello 1\n\n', 'event:\n\n', 'event: done\ndata: ✔\n\n'],
      [
        { data: 'Hello 1', event: 'message' },
        { data: '✔', event: 'done' },
      ],
    );
  });

  it('stream with empty `retry` field', () => {
    expectEvents(
      ['id: 1\nretry: 500\ndata: 🥌\n\n', 'id:2\nretry:\ndata:🧹\n\n', 'id: 3\ndata: ✅\n\n'],
      [
        { data: '🥌', id: '1' },
        { data: '🧹', id: '2' },
        { data: '✅', id: '3' },
      ],
    );
  });

  it('stream with oddly shaped data field', () => {
    // `data:` and `data` alone append a line feed to the data buffer: the event is dispatched.
    expectEvents(['data:\n\ndata\ndata\n\ndata:test\n\n'], [{ data: '' }, { data: '\n' }, { data: 'test' }]);
  });

  it('stream with cr separating chunks of same event', () => {
    expectEvents(['data: A\r\n', 'data: B\r', '\n', 'data: C\r\n', '\n'], [{ data: 'A\nB\nC' }]);
  });

  it('stream with partially incorrect retry fields', () => {
    expectEvents(['retry:1000\nretry:2000x\ndata:x\n\n'], [{ data: 'x', event: 'message' }]);
  });

  it('stream with `id` field containing a NULL character', () => {
    expectEvents(['id: 123\nid: bad\0id\ndata: hello\n\n'], [{ id: '123', data: 'hello' }]);
  });

  it('an id from a block without data dispatches nothing, but is the id of the next event', () => {
    expectEvents(['id: 42\n\n', 'data: hello\n\n'], [{ id: '42', data: 'hello' }]);
  });

  it('stream with unknown fields', () => {
    expectEvents(
      ['data:abc\n data\ndata\nfoobar:xxx\njustsometext\n:thisisacommentyay\ndata:123\n\n'],
      [{ data: 'abc\n\n123' }],
    );
  });
});

describe('EventScanner', () => {
  describe('#scan', () => {
    it('counts only events with data by default, never comments, blank lines or other fields', () => {
      const stream = encoder.encode(
        ': keep-alive\n\n\n\nevent: ping\n\nid: 4\nretry: 10\n\ndata: x\n\n: keep-alive\n\n',
      );
      expect(defaultCount(stream)).toBe(1);
    });

    it('reads a huge event split across many chunks with mixed line ends without changing a byte, and counts it once', () => {
      const big = 'y'.repeat(3 * 1024 * 1024);
      const stream = encoder.encode(`\uFEFF: open\r\ndata: ${big}\rdata: ${big}\ndata: end\r\n\r\n: after\r\r`);
      const copy = Buffer.from(stream);
      for (const chunkSize of [1_000, 4_096, 65_536, 1_000_003]) {
        const scanner = new EventScanner(SSE, undefined);
        let progress = 0;
        for (let at = 0; at < stream.length; at += chunkSize) {
          if (scanner.scan(stream.subarray(at, at + chunkSize))) progress++;
        }
        expect(progress).toBe(1);
      }
      expect(Buffer.compare(stream, copy)).toBe(0);
      const found = events(
        Array.from({ length: Math.ceil(stream.length / 65_536) }, (_, i) =>
          stream.subarray(i * 65_536, (i + 1) * 65_536),
        ),
      );
      expect(found).toHaveLength(1);
      expect(found[0]?.data).toBe(`${big}\n${big}\nend`);
    });

    it('keeps nothing of the chunks by default, and only the unfinished line with a custom isProgress', () => {
      const defaults = new EventScanner(SSE, undefined);
      defaults.scan(encoder.encode('data: half of a li'));
      expect(Object.values(defaults).some((field) => Array.isArray(field) && field.length > 0)).toBe(false);
      const custom = new EventScanner(SSE, () => true);
      custom.scan(encoder.encode('data: one\n'));
      custom.scan(encoder.encode('data: half of a li'));
      const held = Object.values(custom)
        .filter((field): field is Uint8Array[] => Array.isArray(field))
        .flat();
      expect(held.map((piece) => new TextDecoder().decode(piece))).toEqual(['data: half of a li']);
    });

    it('gives isProgress the event and counts only what it accepts', () => {
      const scanner = new EventScanner(SSE, (event) => event.event !== 'ping');
      expect(scanner.scan(encoder.encode('event: ping\ndata: {"type": "ping"}\n\n'))).toBe(false);
      expect(scanner.scan(encoder.encode('event: content_block_delta\ndata: {}\n\n'))).toBe(true);
    });

    it('lets what isProgress throws through', () => {
      const scanner = new EventScanner(SSE, () => {
        throw new Error('bad test');
      });
      expect(() => scanner.scan(encoder.encode('data: x\n\n'))).toThrow('bad test');
    });
  });

  describe('NDJSON and JSON Lines', () => {
    it('counts every non-blank line, LF or CRLF, split anywhere', () => {
      expectEvents(
        ['{"a":1}\n', '\n', '   \r\n', '{"b":', '2}\r\n', '\t\n', '[3]\n', '{"unfinished"'],
        [{ data: '{"a":1}' }, { data: '{"b":2}' }, { data: '[3]' }],
        LINES,
      );
    });

    it('gives isProgress each line as { data }, without its line end', () => {
      const found = events(['{"type":"ping"}\r\n{"type":"token"}\n'], LINES);
      expect(found).toEqual([{ data: '{"type":"ping"}' }, { data: '{"type":"token"}' }]);
    });

    it('takes a lone CR for part of a line, not its end', () => {
      expect(defaultCount(encoder.encode('{"a":1}\r{"b":2}\r'), LINES)).toBe(0);
    });
  });
});
