import { describe, expect, it } from 'vitest';
import {
  copyJsonValue,
  isSnapshotKey,
  readSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type TimerSetSnapshot,
} from '../../src/timer-set/snapshot.js';

function saved(overrides: Partial<TimerSetSnapshot<unknown>> = {}): TimerSetSnapshot<unknown> {
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    savedAt: 1_700_000_000_000,
    paused: false,
    timers: [{ key: 'hero:haste', value: { power: 2 }, paused: false, remainingMs: [800, 1_200] }],
    ...overrides,
  };
}

describe('timer-set-snapshot', () => {
  describe('#copyJsonValue', () => {
    it('copies a value that survives JSON (core’s one JSON check), detached from the live one', () => {
      const live = { stacks: [1, 2], owner: { id: 'hero' } };
      const copy = copyJsonValue(live, 'k') as typeof live;
      expect(copy).toEqual(live);
      live.stacks.push(3);
      expect(copy.stacks).toEqual([1, 2]);
    });

    it('names the key and the path of what JSON would change', () => {
      expect(() => copyJsonValue({ at: new Date(0) }, 'hero:haste')).toThrow(
        /^snapshot: the value of key "hero:haste" cannot be saved: value\.at is a Date instance/,
      );
      expect(() => copyJsonValue([1, undefined], 7)).toThrow(
        new TypeError('snapshot: the value of key 7 cannot be saved: value[1] is undefined, which JSON drops'),
      );
    });
  });

  describe('#readSnapshot', () => {
    it('accepts a snapshot, also after a JSON round trip', () => {
      const s = saved();
      expect(readSnapshot(s)).toBe(s);
      expect(readSnapshot(JSON.parse(JSON.stringify(s)))).toEqual(s);
    });

    it.each<[string, unknown, RegExp]>([
      ['not an object', 'save', /^saved must be a TimerSet snapshot object, got "save"$/],
      ['another format', saved({ format: 'x' as never }), /^saved\.format must be "tickwheel\.timer-set", got "x"$/],
      ['another version', saved({ version: 2 as never }), /^saved\.version must be 1, got 2$/],
      ['a bad savedAt', saved({ savedAt: Number.NaN }), /^saved\.savedAt must be a finite number/],
      ['a bad paused', saved({ paused: 'no' as never }), /^saved\.paused must be a boolean, got "no"$/],
      ['timers not an array', saved({ timers: {} as never }), /^saved\.timers must be an array, got \{\}$/],
      ['a null timer', saved({ timers: [null as never] }), /^saved\.timers\[0\] must be an object, got null$/],
      [
        'a bad key',
        saved({ timers: [{ key: {} as never, value: 1, paused: false, remainingMs: [1] }] }),
        /^saved\.timers\[0\]\.key must be a string or a finite number, got \{\}$/,
      ],
      [
        'a key twice',
        saved({
          timers: [
            { key: 'a', value: 1, paused: false, remainingMs: [1] },
            { key: 'a', value: 2, paused: false, remainingMs: [1] },
          ],
        }),
        /^saved\.timers\[1\]\.key "a" appears twice$/,
      ],
      [
        'no stacks',
        saved({ timers: [{ key: 'a', value: 1, paused: false, remainingMs: [] }] }),
        /^saved\.timers\[0\]\.remainingMs \(key "a"\) must be a non-empty array of milliseconds/,
      ],
      [
        'a negative stack',
        saved({ timers: [{ key: 'a', value: 1, paused: false, remainingMs: [5, -1] }] }),
        /^saved\.timers\[0\]\.remainingMs \(key "a"\) must hold finite numbers >= 0, got -1$/,
      ],
      [
        'no value',
        saved({ timers: [{ key: 'a', paused: false, remainingMs: [5] } as never] }),
        /^saved\.timers\[0\]\.value \(key "a"\) is missing$/,
      ],
    ])('refuses %s, naming the field', (_what, value, message) => {
      expect(() => readSnapshot(value)).toThrow(message);
    });
  });

  describe('#isSnapshotKey', () => {
    it('is true for strings and finite numbers only', () => {
      expect([isSnapshotKey('a'), isSnapshotKey(''), isSnapshotKey(3), isSnapshotKey(-0.5)]).toEqual([
        true,
        true,
        true,
        true,
      ]);
      expect([isSnapshotKey(NaN), isSnapshotKey(Infinity), isSnapshotKey({}), isSnapshotKey(1n)]).toEqual([
        false,
        false,
        false,
        false,
      ]);
    });
  });
});
