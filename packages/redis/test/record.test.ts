import { describe, expect, it } from 'vitest';
import { parseRecord } from '../src/record.js';

describe('record', () => {
  describe('parseRecord', () => {
    it('takes a record apart, its due time in base 36, and joins its payload', () => {
      expect(parseRecord(`17:${(1_800_000_000_000).toString(36)}:2:5:e1000j500`, '{"a":"b:c"}')).toEqual({
        token: '17',
        dueAt: 1_800_000_000_000,
        attempts: 2,
        maxAttempts: 5,
        backoff: 'e1000j500',
        payload: '{"a":"b:c"}',
      });
      expect(parseRecord('1:0:0:0:', '')).toMatchObject({ maxAttempts: 0, backoff: '', payload: '' });
    });

    it('names a record it cannot read (the 0.1 format, say)', () => {
      expect(() => parseRecord('3:1800000000000:0:{"x":1}', '')).toThrow(
        /unreadable timer record "3:1800000000000:0:\{\\"x\\":1\}"/,
      );
    });
  });
});
