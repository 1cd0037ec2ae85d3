import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { isServer, isSocket, SocketIntake } from '../src/socket-intake.js';
import { FakeServer, FakeSocket } from './helpers/fake-socket.js';

function intakeOf(target: FakeServer | FakeSocket) {
  const attached: WebSocket[] = [];
  const intake = new SocketIntake<WebSocket>((target instanceof FakeSocket ? target.ws : target) as never, (s) =>
    attached.push(s),
  );
  return { intake, attached };
}

describe('SocketIntake', () => {
  it("attaches a server's existing and later connections", () => {
    const server = new FakeServer();
    const early = new FakeSocket();
    server.clients.add(early.ws);
    const { attached } = intakeOf(server);
    const late = new FakeSocket();
    server.connect(late);
    expect(attached).toEqual([early.ws, late.ws]);
  });

  it("attaches a CONNECTING stand-in without a handshake request on 'open', and forgets one that closes first", () => {
    const opening = new FakeSocket();
    opening.readyState = 0;
    const { attached } = intakeOf(opening);
    expect(attached).toEqual([]);
    opening.readyState = 1;
    opening.emit('open');
    expect(attached).toEqual([opening.ws]);
    expect(opening.listenerCount('open') + opening.listenerCount('close')).toBe(0);

    const failing = new FakeSocket();
    failing.readyState = 0;
    const other = intakeOf(failing);
    failing.finishClose();
    expect(other.attached).toEqual([]);
    expect(failing.listenerCount('open') + failing.listenerCount('close')).toBe(0);
  });

  describe('a client socket CONNECTING with its handshake request (ws keeps it as _req)', () => {
    /** A connecting fake client with a request that emits what ws's does. */
    function connecting(): { socket: FakeSocket; request: EventEmitter } {
      const socket = new FakeSocket();
      socket.readyState = 0;
      const request = new EventEmitter();
      (socket as unknown as { _req: EventEmitter })._req = request;
      return { socket, request };
    }
    const requestHooks = (request: EventEmitter) =>
      ['upgrade', 'response', 'error', 'close'].map((e) => request.listenerCount(e));

    it("waits on the request, not the socket, and attaches after ws's 'upgrade' listener opened it", () => {
      const { socket, request } = connecting();
      const { attached } = intakeOf(socket);
      expect(socket.eventNames()).toEqual([]);
      socket.removeAllListeners();
      socket.readyState = 1;
      request.emit('upgrade');
      expect(attached).toEqual([socket.ws]);
      expect(requestHooks(request)).toEqual([0, 0, 0, 0]);
    });

    it('moves to the new request of a redirect, and forgets a socket that will not open', () => {
      const { socket, request } = connecting();
      const { attached, intake } = intakeOf(socket);
      const redirected = new EventEmitter();
      (socket as unknown as { _req: EventEmitter })._req = redirected;
      request.emit('response');
      expect(requestHooks(request)).toEqual([0, 0, 0, 0]);
      expect(requestHooks(redirected)).toEqual([1, 1, 1, 1]);
      socket.readyState = 3;
      redirected.emit('error');
      expect(attached).toEqual([]);
      expect(requestHooks(redirected)).toEqual([0, 0, 0, 0]);
      expect(intake.forget(socket.ws)).toBe(false);
    });

    it('lets go of the request on stop()', () => {
      const { socket, request } = connecting();
      const { intake, attached } = intakeOf(socket);
      intake.stop();
      socket.readyState = 1;
      request.emit('upgrade');
      expect(attached).toEqual([]);
      expect(requestHooks(request)).toEqual([0, 0, 0, 0]);
    });
  });

  it('ignores closing and closed sockets', () => {
    const server = new FakeServer();
    const { intake, attached } = intakeOf(server);
    for (const state of [2, 3]) {
      const s = new FakeSocket();
      s.readyState = state;
      intake.add(s.ws);
    }
    expect(attached).toEqual([]);
  });

  it("puts its hook back after wss.removeAllListeners('connection') and adopts what came in between", async () => {
    const server = new FakeServer();
    const { attached } = intakeOf(server);
    server.removeAllListeners('connection');
    const between = new FakeSocket();
    server.connect(between);
    expect(attached).toEqual([]);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(attached).toEqual([between.ws]);
    expect(server.listenerCount('connection')).toBe(1);
  });

  it('removes every hook on stop()', () => {
    const server = new FakeServer();
    const { intake } = intakeOf(server);
    const opening = new FakeSocket();
    opening.readyState = 0;
    intake.add(opening.ws);
    intake.stop();
    expect(server.listenerCount('connection') + server.listenerCount('removeListener')).toBe(0);
    expect(opening.listenerCount('open') + opening.listenerCount('close')).toBe(0);
  });

  it('throws a TypeError naming a target that is neither a server nor a socket', () => {
    expect(() => new SocketIntake({} as never, () => {})).toThrow(/WebSocketServer or WebSocket, got/);
    expect(isServer(new FakeServer())).toBe(true);
    expect(isSocket(new FakeSocket())).toBe(true);
    expect(isSocket(new FakeServer())).toBe(false);
  });
});
