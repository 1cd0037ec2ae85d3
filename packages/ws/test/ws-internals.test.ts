import { EventEmitter } from 'node:events';
import type { ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { CloseWatch } from '../src/close-watch.js';
import { controlFrameBytes } from '../src/frame-size.js';
import { heartbeat } from '../src/heartbeat.js';
import { SocketIntake } from '../src/socket-intake.js';
import { bytesReadOf, writeProgressOf } from '../src/transport-probes.js';
import {
  answersPings,
  frameReaderOf,
  handshakeRequestOf,
  isClientSide,
  socketOfReader,
  transportOf,
  writeQueueSizeOf,
} from '../src/ws-internals.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';
import { useManualWheel } from './helpers/watch-one.js';

let clock: ManualClock;
let wheel: TimingWheel;
useManualWheel((c, w) => ([clock, wheel] = [c, w]));

/** `socket` without its own field `name`, as a ws release that moved it would leave it. */
function without<T extends object>(socket: T, name: string): T {
  delete (socket as Record<string, unknown>)[name];
  return socket;
}

/** What ws keeps as `_receiver`: a Writable whose symbol-keyed property points back to its socket. */
function withReader(socket: FakeSocket): EventEmitter {
  const reader = Object.assign(new EventEmitter(), { _writableState: {}, [Symbol('websocket')]: socket });
  (socket as unknown as { _receiver: EventEmitter })._receiver = reader;
  return reader;
}

describe('ws-internals', () => {
  describe('transportOf (`_socket`)', () => {
    it('finds the transport, and without one the counters read as missing', () => {
      const socket = new FakeSocket({ transport: true });
      expect(transportOf(socket.ws)).toBe(socket._socket);
      without(socket, '_socket');
      expect(transportOf(socket.ws)).toBeUndefined();
      expect(bytesReadOf(socket.ws)).toBe(-1);
      expect(writeProgressOf(socket.ws)).toBeUndefined();
    });

    it('falls back to listening to every read: pings still run, and a talking peer is not pinged', () => {
      const server = new FakeServer();
      const beat = heartbeat(server as never, { pingIntervalMs: 100, pongTimeoutMs: 50, wheel });
      const socket = without(new FakeSocket({ transport: true }), '_socket');
      server.connect(socket);
      expect(socket.listenerCount('message')).toBe(1);
      for (let t = 0; t <= 1_000; t += 40) {
        clock.advanceTo(t);
        socket.emit('message', Buffer.from('hi'));
      }
      expect(socket.pings).toBe(0);
      clock.advanceTo(1_200);
      expect(socket.pings).toBe(1);
      clock.advanceTo(1_300);
      expect(beat.stats().dead).toBe(1);
      beat.stop();
    });
  });

  describe('writeQueueSizeOf (`net.Socket._handle.writeQueueSize`)', () => {
    it('reads the write in flight, and 0 without a handle or the field', () => {
      expect(writeQueueSizeOf({ _handle: { writeQueueSize: 300 } } as never)).toBe(300);
      expect(writeQueueSizeOf({ _handle: {} } as never)).toBe(0);
      expect(writeQueueSizeOf({ _handle: null } as never)).toBe(0);
      expect(writeQueueSizeOf({})).toBe(0);
      const socket = new FakeSocket();
      socket._socket.bytesWritten = 1_000;
      socket._socket.writableLength = 400;
      expect(writeProgressOf(socket.ws)).toEqual({ done: 600, inFlight: 0 });
    });
  });

  describe('isClientSide (`_isServer`)', () => {
    it("reads ws's side, and takes the given one when the field is missing", () => {
      const socket = new FakeSocket();
      expect(isClientSide(socket.ws, true)).toBe(false);
      socket._isServer = false;
      expect(isClientSide(socket.ws, false)).toBe(true);
      without(socket, '_isServer');
      expect(isClientSide(socket.ws, false)).toBe(false);
      expect(isClientSide(socket.ws, true)).toBe(true);
      expect(controlFrameBytes(socket.ws, 0, true)).toBe(6);
    });
  });

  describe('answersPings (`_autoPong`)', () => {
    it('reads the option where ws 8.16-8.22 keep it', () => {
      const socket = new FakeSocket();
      expect(answersPings(socket.ws)).toBe(true);
      socket._autoPong = false;
      expect(answersPings(socket.ws)).toBe(false);
    });

    it('takes a missing field as "off" on ws 8.23 (which has `_closeTimeout`), as "on" before 8.16', () => {
      const newer = Object.assign(without(new FakeSocket(), '_autoPong'), { _closeTimeout: 30_000 });
      expect(answersPings(newer.ws)).toBe(false);
      const older = without(new FakeSocket(), '_autoPong');
      expect(answersPings(older.ws)).toBe(true);
    });
  });

  describe('handshakeRequestOf (`_req`)', () => {
    it('finds a request with listeners, and falls back to waiting on the socket itself', () => {
      const socket = new FakeSocket();
      socket.readyState = 0;
      const request = new EventEmitter();
      Object.assign(socket, { _req: request });
      expect(handshakeRequestOf(socket.ws)).toBe(request);
      without(socket, '_req');
      expect(handshakeRequestOf(socket.ws)).toBeUndefined();
      const attached: WebSocket[] = [];
      new SocketIntake<WebSocket>(socket.ws, (s) => attached.push(s));
      expect(socket.listenerCount('open')).toBe(1);
      socket.readyState = 1;
      socket.emit('open');
      expect(attached).toEqual([socket.ws]);
    });
  });

  describe('frameReaderOf (`_receiver`, `_writableState`, `kWebSocket`)', () => {
    it('finds the reader and the socket back from it', () => {
      const socket = new FakeSocket();
      const reader = withReader(socket);
      expect(frameReaderOf(socket.ws)).toBe(reader);
      expect(socketOfReader(reader)).toBe(socket.ws);
    });

    it.each(['_receiver', '_writableState', 'back-reference'])(
      'falls back to a plain close listener when %s is missing',
      (field) => {
        const socket = new FakeSocket();
        const reader = withReader(socket);
        if (field === '_receiver') without(socket, '_receiver');
        else if (field === '_writableState') without(reader, '_writableState');
        else for (const key of Object.getOwnPropertySymbols(reader)) delete (reader as never)[key];
        expect(frameReaderOf(socket.ws)).toBeUndefined();
        const closed: WebSocket[] = [];
        new CloseWatch((s) => closed.push(s)).watch(socket.ws);
        expect(socket.listenerCount('close')).toBe(1);
        socket.finishClose();
        expect(closed).toEqual([socket.ws]);
      },
    );
  });
});
