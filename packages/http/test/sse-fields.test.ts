import { describe, expect, it } from 'vitest';
import { commentText, eventText, HEARTBEAT, retryText } from '../src/sse-fields.js';

describe('sse-fields', () => {
  describe('eventText', () => {
    it('writes one data line and a blank line', () => {
      expect(eventText('hello', undefined, undefined)).toBe('data: hello\n\n');
    });

    it('writes multi-line data as several data lines, whatever the line break', () => {
      expect(eventText('a\nb\r\nc\rd', undefined, undefined)).toBe('data: a\ndata: b\ndata: c\ndata: d\n\n');
    });

    it('writes id and event before the data', () => {
      expect(eventText('{"n":1}', 'tick', '7')).toBe('id: 7\nevent: tick\ndata: {"n":1}\n\n');
    });

    it('keeps empty data as one empty data line (EventSource dispatches it as "")', () => {
      expect(eventText('', undefined, undefined)).toBe('data: \n\n');
    });

    it('refuses data that is not a string', () => {
      expect(() => eventText(5 as never, undefined, undefined)).toThrow(
        new TypeError('@tickwheel/http: data must be a string, got 5'),
      );
    });

    it('refuses a line break in event or id, and NUL in id', () => {
      expect(() => eventText('x', 'a\nid: 9', undefined)).toThrow(RangeError);
      expect(() => eventText('x', undefined, '1\r2')).toThrow('@tickwheel/http: id must not contain a line break');
      expect(() => eventText('x', undefined, '1\0')).toThrow('@tickwheel/http: id must not contain NUL');
    });
  });

  it('writes a comment per line, a heartbeat and a retry field', () => {
    expect(commentText('keep\nalive')).toBe(': keep\n: alive\n\n');
    expect(HEARTBEAT).toBe(':\n\n');
    expect(retryText(2500)).toBe('retry: 2500\n\n');
  });
});
