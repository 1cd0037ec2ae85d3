import { spawnSync } from 'node:child_process';
import { inspect } from 'node:util';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { setSocketRecord, socketRecord } from '../src/socket-record.js';
import { FakeSocket } from './helpers/fake-socket.js';

/** Everything user code can reflect on an object: its keys by every API, and how it prints and serializes. */
function reflect(target: object): unknown {
  const keys: string[] = [];
  for (const key in target) keys.push(key);
  return {
    keys: Object.keys(target),
    names: Object.getOwnPropertyNames(target),
    symbols: Object.getOwnPropertySymbols(target).map(String),
    ownKeys: Reflect.ownKeys(target).map(String),
    forIn: keys,
    descriptors: Object.keys(Object.getOwnPropertyDescriptors(target)),
    json: JSON.stringify(target, (key, value: unknown) =>
      key === '' || typeof value !== 'object' ? value : '[object]',
    ),
    inspected: inspect(target, { showHidden: true, depth: 0 }),
  };
}

describe('socket-record', () => {
  it('has no record for an object never stamped, nor for a primitive', () => {
    expect(socketRecord({})).toBeUndefined();
    expect(socketRecord(new FakeSocket())).toBeUndefined();
    for (const value of [null, undefined, 42, 'socket', Symbol('s')]) expect(socketRecord(value)).toBeUndefined();
  });

  it('keeps a record and hands back the same object', () => {
    const socket = new FakeSocket();
    const record = { due: 1 };
    expect(setSocketRecord(socket, record)).toBe(true);
    expect(socketRecord(socket)).toBe(record);
    const other = { due: 2 };
    setSocketRecord(socket, other);
    expect(socketRecord(socket)).toBe(other);
  });

  it('clears with undefined and reuses the slot', () => {
    const socket = new FakeSocket();
    setSocketRecord(socket, { due: 1 });
    setSocketRecord(socket, undefined);
    expect(socketRecord(socket)).toBeUndefined();
    const again = { due: 3 };
    expect(setSocketRecord(socket, again)).toBe(true);
    expect(socketRecord(socket)).toBe(again);
  });

  it('is invisible to every reflection API: keys, symbols, for...in, JSON, util.inspect with showHidden', () => {
    const bare = new FakeSocket();
    const stamped = new FakeSocket();
    setSocketRecord(stamped, { secret: 'record' });
    expect(reflect(stamped)).toEqual(reflect(bare));
    expect(inspect(stamped, { showHidden: true, depth: 4 })).not.toContain('record');
  });

  it('is not copied by spread, Object.assign or structuredClone', () => {
    const plain = { a: 1 };
    setSocketRecord(plain, { secret: 1 });
    expect(socketRecord({ ...plain })).toBeUndefined();
    expect(socketRecord(Object.assign({}, plain))).toBeUndefined();
    const cloned = structuredClone(plain);
    expect(cloned).toEqual({ a: 1 });
    expect(socketRecord(cloned)).toBeUndefined();
  });

  it('cannot be deleted by user code: deleting every own key leaves it', () => {
    const socket = new FakeSocket();
    const record = { due: 1 };
    setSocketRecord(socket, record);
    for (const key of Reflect.ownKeys(socket)) expect(Reflect.deleteProperty(socket, key)).toBe(true);
    expect(Reflect.ownKeys(socket)).toEqual([]);
    expect(socketRecord(socket)).toBe(record);
  });

  it('survives removeAllListeners()', () => {
    const socket = new FakeSocket();
    const record = { due: 1 };
    socket.on('pong', () => undefined);
    setSocketRecord(socket, record);
    socket.removeAllListeners();
    expect(socketRecord(socket)).toBe(record);
  });

  it('works on a ws WebSocket (as a server creates them) and keeps it a WebSocket', () => {
    // `new WebSocket(null, undefined, options)` is how ws's server builds a socket before it has a transport: no I/O.
    const socket = new WebSocket(null as never, undefined, {});
    const bare = new WebSocket(null as never, undefined, {});
    const record = { due: 1 };
    expect(setSocketRecord(socket, record)).toBe(true);
    expect(socketRecord(socket)).toBe(record);
    expect(socket).toBeInstanceOf(WebSocket);
    expect(Object.getPrototypeOf(socket)).toBe(WebSocket.prototype);
    expect(Object.keys(socket)).toEqual(Object.keys(bare));
    expect(Reflect.ownKeys(socket).map(String)).toEqual(Reflect.ownKeys(bare).map(String));
  });

  it('works on stand-ins: a Proxy (no trap runs), a frozen and a sealed object', () => {
    const traps: string[] = [];
    const proxy = new Proxy(
      {},
      Object.fromEntries(
        ['get', 'set', 'has', 'defineProperty', 'ownKeys', 'getOwnPropertyDescriptor'].map((trap) => [
          trap,
          (...args: unknown[]) => {
            traps.push(trap);
            return (Reflect as unknown as Record<string, (...a: unknown[]) => unknown>)[trap](...args);
          },
        ]),
      ),
    );
    const frozen = Object.freeze({ a: 1 });
    const sealed = Object.seal({ b: 2 });
    for (const target of [proxy, frozen, sealed]) {
      const record = { due: 1 };
      // Node 20-26 accept a private field on a non-extensible object; a later V8 may refuse (next test).
      if (!setSocketRecord(target, record)) continue;
      expect(socketRecord(target)).toBe(record);
    }
    expect(traps).toEqual([]);
    expect(Object.keys(frozen)).toEqual(['a']);
  });

  it('reports false, and leaves the object alone, where private fields obey non-extensibility', () => {
    // V8's flag for the TC39 proposal "Nonextensible Applies to Private" (Node 26 has it, off by default).
    const options = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8', timeout: 10_000 });
    const hasFlag = options.stdout.includes('--js-nonextensible-applies-to-private');
    const locked = Object.preventExtensions({});
    if (!hasFlag) {
      expect(setSocketRecord(locked, 1)).toBe(true);
      return;
    }
    v8.setFlagsFromString('--js-nonextensible-applies-to-private');
    try {
      expect(setSocketRecord(locked, 1)).toBe(false);
      expect(socketRecord(locked)).toBeUndefined();
      const open = {};
      expect(setSocketRecord(open, 2)).toBe(true);
      expect(socketRecord(open)).toBe(2);
    } finally {
      v8.setFlagsFromString('--no-js-nonextensible-applies-to-private');
    }
  });
});
