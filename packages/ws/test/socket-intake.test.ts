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

  it('attaches a CONNECTING socket on open, and forgets one that closes first', () => {
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
