import { afterEach, describe, expect, it, vi } from 'vitest';
import { LATE_MS, SilenceWatch, watch, type DeadEvent } from '../../src/browser/silence-watch.js';
import type { WatchOptions } from '../../src/browser/types.js';
import { FakePage, FakeWhatwgSocket } from '../helpers/fake-page.js';

/** A watch on a fake socket and page, with the 'dead' events it dispatched. */
function setup(options: WatchOptions, { readyState = 1, document = true } = {}) {
  const page = new FakePage({ document });
  const socket = new FakeWhatwgSocket(readyState);
  const watcher = new SilenceWatch(socket, options, page);
  const dead: Array<{ at: number; event: DeadEvent<FakeWhatwgSocket> }> = [];
  watcher.addEventListener('dead', (event) => dead.push({ at: page.now(), event }));
  return { page, socket, watcher, dead };
}

describe('SilenceWatch', () => {
  describe('silence', () => {
    it('declares the server dead once nothing has arrived for silenceMs, closes the socket and stops', () => {
      const { page, socket, watcher, dead } = setup({ silenceMs: 10_000 });
      page.advanceTo(9_999);
      expect(dead).toEqual([]);
      page.advanceTo(10_000);
      expect(dead.map((d) => d.at)).toEqual([10_000]);
      const { event } = dead[0];
      expect(event).toBeInstanceOf(Event);
      expect(event.type).toBe('dead');
      expect(event.socket).toBe(socket);
      expect(event.silentMs).toBe(10_000);
      expect(socket.closeCalls).toEqual([{ code: 1000, reason: 'server silent' }]);
      expect(watcher.isStopped).toBe(true);
      expect(socket.listenerTotal).toBe(0);
      expect(page.document!.listeners).toBe(0);
      expect(page.pending).toBe(0);
    });

    it('restarts the silence at every message, keepalives included, with one timer however many arrive', () => {
      const { page, socket, dead } = setup({ silenceMs: 10_000 });
      for (let t = 100; t <= 60_000; t += 100) {
        page.advanceTo(t);
        socket.receive(t % 1_000 === 0 ? '' : `tick ${t}`);
        expect(page.pending).toBe(1);
      }
      page.advanceTo(69_999);
      expect(dead).toEqual([]);
      page.advanceTo(70_000);
      expect(dead.map((d) => [d.at, d.event.silentMs])).toEqual([[70_000, 10_000]]);
    });

    it('uses the close code and reason given', () => {
      const { page, socket } = setup({ silenceMs: 50, closeCode: 4001, closeReason: 'no keepalive' });
      page.advance(50);
      expect(socket.closeCalls).toEqual([{ code: 4001, reason: 'no keepalive' }]);
    });

    it('does not close a socket that is closing by the time it is declared dead, and still reports it', () => {
      const { page, socket, dead } = setup({ silenceMs: 50 });
      socket.readyState = 2; // close() called elsewhere, no 'close' event yet
      page.advance(50);
      expect(socket.closeCalls).toEqual([]);
      expect(dead).toHaveLength(1);
    });

    it('works where there is no document (a worker, Node, Deno, Bun)', () => {
      const { page, dead } = setup({ silenceMs: 50 }, { document: false });
      page.advance(50);
      expect(dead).toHaveLength(1);
    });
  });

  describe('throttled and frozen pages', () => {
    it('a late timer re-arms for the remaining silence instead of firing, so messages queued while frozen arrive first', () => {
      const { page, socket, dead } = setup({ silenceMs: 10_000 });
      page.advanceTo(2_000);
      socket.receive('last before the freeze');
      page.sleepUntil(600_000); // frozen ten minutes: the timer due at 12 000 did not run
      page.runDue();
      expect(dead).toEqual([]);
      // Nothing was heard awake after the message, so the whole silence is still to come.
      expect(page.nextDueAt).toBe(610_000);
      socket.receive('queued while frozen');
      page.advanceTo(609_999);
      expect(dead).toEqual([]);
      // The server really went quiet after it: the re-armed timer, on time, says so.
      page.advanceTo(610_000);
      expect(dead.map((d) => [d.at, d.event.silentMs])).toEqual([[610_000, 10_000]]);
    });

    it('a late timer keeps the silence heard before the page slept and waits only for the rest', () => {
      const { page, dead } = setup({ silenceMs: 10_000 });
      page.advanceTo(3_000); // nothing since the start
      page.sleepUntil(3_000 + 100_000);
      page.runDue(); // due at 10 000, run at 103 000: heard awake 0 ms of silence
      expect(page.nextDueAt).toBe(113_000);
      page.advanceTo(113_000);
      expect(dead.map((d) => [d.at, d.event.silentMs])).toEqual([[113_000, 113_000]]);
    });

    it('re-arms for at least LATE_MS after waking, even with most of the silence heard', () => {
      const { page, socket, dead } = setup({ silenceMs: 10_000 });
      page.advanceTo(5_500);
      socket.receive('x');
      page.sleepUntil(15_000);
      page.runDue(); // due at 10 000, late, but a message came 9 500 ms ago: re-armed for 15 500, awake at 15 000
      page.sleepUntil(30_000);
      page.runDue(); // due at 15 500, late: heard 15 000 - 5 500 = 9 500 of 10 000
      expect(dead).toEqual([]);
      expect(page.nextDueAt).toBe(30_000 + LATE_MS);
      page.advanceTo(30_000 + LATE_MS);
      expect(dead).toHaveLength(1);
    });

    it('never declares a live server dead in a hidden tab whose timers run once a minute', () => {
      const { page, socket, dead } = setup({ silenceMs: 45_000 });
      page.document!.hide();
      // A keepalive every 20 s (the server's keepaliveMs), delivered on time: network events are not throttled.
      const keepalives: Array<[number, () => void]> = [];
      for (let t = 20_000; t <= 3_600_000; t += 20_000) keepalives.push([t, () => socket.receive('')]);
      page.throttledUntil(3_600_000, 60_000, keepalives);
      page.document!.show();
      page.advance(30_000);
      expect(dead).toEqual([]);
    });

    it('declares a dead server dead in a hidden tab within silenceMs and two throttled wake-ups', () => {
      const { page, dead } = setup({ silenceMs: 45_000 });
      page.document!.hide();
      page.throttledUntil(10 * 60_000, 60_000);
      // Due at 45 s, run at 60 s (late): nothing heard awake yet, re-armed for 45 s; due at 105 s, run at
      // 120 s: 60 s of silence heard awake before that sleep.
      expect(dead.map((d) => d.at)).toEqual([120_000]);
    });

    it('the page shown again re-checks at once: dead when the silence was heard before it was hidden', () => {
      const { page, dead } = setup({ silenceMs: 45_000 });
      page.document!.hide();
      page.throttledUntil(70_000, 60_000); // the late check at 60 s heard 60 s of silence, re-armed for 105 s
      expect(dead).toEqual([]);
      page.document!.show();
      expect(dead.map((d) => [d.at, d.event.silentMs])).toEqual([[70_000, 70_000]]);
    });

    it('the page shown again after a freeze waits for the silence it has not heard, and messages queued meanwhile keep it alive', () => {
      const { page, socket, dead } = setup({ silenceMs: 45_000 });
      page.advanceTo(1_000);
      page.document!.hide();
      page.sleepUntil(600_000);
      page.document!.show(); // before the late timer runs: nothing heard awake since the start at 0
      expect(dead).toEqual([]);
      expect(page.nextDueAt).toBe(600_000 + 45_000);
      socket.receive('queued while frozen');
      page.runDue();
      page.advanceTo(640_000);
      expect(dead).toEqual([]);
    });

    it('the page shown right after a late timer, before the messages queued while it slept are delivered, is not declared dead', () => {
      const { page, socket, dead } = setup({ silenceMs: 10_000 });
      page.document!.hide();
      page.sleepUntil(50_000);
      page.runDue(); // late: nothing heard awake, re-armed
      page.advance(10);
      page.document!.show(); // 10 ms after waking: the sleep is still not heard silence
      expect(dead).toEqual([]);
      page.advance(10);
      socket.receive('queued while asleep');
      page.advanceTo(60_019);
      expect(dead).toEqual([]);
    });

    it('a page hidden or shown with the silence short of silenceMs only re-arms', () => {
      const { page, socket, dead } = setup({ silenceMs: 45_000 });
      page.advanceTo(10_000);
      socket.receive('x');
      page.document!.hide();
      page.advanceTo(20_000);
      page.document!.show();
      expect(page.pending).toBe(1);
      expect(page.nextDueAt).toBe(55_000);
      page.advanceTo(55_000);
      expect(dead.map((d) => d.at)).toEqual([55_000]);
    });
  });

  describe('lifecycle', () => {
    it("watches a connecting socket from its 'open'", () => {
      const { page, socket, watcher, dead } = setup({ silenceMs: 1_000 }, { readyState: 0 });
      expect(watcher.lastMessageAt).toBeNaN();
      expect(page.pending).toBe(0);
      page.advanceTo(5_000);
      socket.open();
      expect(watcher.lastMessageAt).toBe(5_000);
      expect(socket.listeners('open')).toBe(0);
      page.advanceTo(5_999);
      expect(dead).toEqual([]);
      page.advanceTo(6_000);
      expect(dead).toHaveLength(1);
    });

    it('does nothing with a closing or closed socket', () => {
      for (const readyState of [2, 3]) {
        const { page, socket, watcher } = setup({ silenceMs: 1_000 }, { readyState });
        expect(watcher.isStopped).toBe(true);
        expect(socket.listenerTotal).toBe(0);
        expect(page.pending).toBe(0);
      }
    });

    it("stops, removing every listener and its timer, on the socket's 'close'", () => {
      const { page, socket, watcher, dead } = setup({ silenceMs: 1_000 });
      expect(socket.listenerTotal).toBe(2);
      expect(page.document!.listeners).toBe(1);
      socket.closed();
      expect(watcher.isStopped).toBe(true);
      expect(socket.listenerTotal).toBe(0);
      expect(page.document!.listeners).toBe(0);
      expect(page.pending).toBe(0);
      page.advance(10_000);
      expect(dead).toEqual([]);
    });

    it("a socket closed while connecting leaves nothing behind (no 'open' listener)", () => {
      const { page, socket } = setup({ silenceMs: 1_000 }, { readyState: 0 });
      socket.closed();
      expect(socket.listenerTotal).toBe(0);
      expect(page.pending).toBe(0);
    });

    it('#stop leaves the socket open, and is idempotent; so is [Symbol.dispose]', () => {
      const { page, socket, watcher, dead } = setup({ silenceMs: 1_000 });
      watcher.stop();
      watcher.stop();
      expect(socket.closeCalls).toEqual([]);
      expect(socket.readyState).toBe(1);
      expect(socket.listenerTotal).toBe(0);
      page.advance(10_000);
      expect(dead).toEqual([]);

      const other = setup({ silenceMs: 1_000 });
      other.watcher[Symbol.dispose]();
      expect(other.watcher.isStopped).toBe(true);
      expect(other.socket.listenerTotal).toBe(0);
      expect(Object.prototype.hasOwnProperty.call(other.watcher, Symbol.dispose)).toBe(false);
    });

    it('adds no own property to the socket and swaps no prototype', () => {
      const page = new FakePage();
      const socket = new FakeWhatwgSocket();
      const before = Reflect.ownKeys(socket);
      const proto = Object.getPrototypeOf(socket) as object;
      const watcher = new SilenceWatch(socket, { silenceMs: 1_000 }, page);
      socket.receive('x');
      expect(Reflect.ownKeys(socket)).toEqual(before);
      expect(Object.getPrototypeOf(socket)).toBe(proto);
      page.advance(1_000);
      expect(watcher.isStopped).toBe(true);
      expect(Reflect.ownKeys(socket)).toEqual(before);
    });

    // After engine.io-client's test/socket.js, "throttled timer › checks the state of the timer"
    // (socketio/socket.io, packages/engine.io-client): once expired, further checks do not close again.
    it("dispatches 'dead' once, whatever checks come after", () => {
      const { page, socket, dead } = setup({ silenceMs: 1_000 });
      page.document!.hide();
      page.sleepUntil(5_000);
      page.runDue();
      page.document!.show();
      page.advance(10_000);
      page.document!.show();
      socket.receive('late');
      page.advance(10_000);
      expect(dead).toHaveLength(1);
      expect(socket.closeCalls).toHaveLength(1);
    });

    it("a 'dead' listener that stops the watch again or closes the socket itself is harmless", () => {
      const { page, socket, watcher } = setup({ silenceMs: 1_000 });
      let calls = 0;
      watcher.addEventListener('dead', (event) => {
        calls++;
        watcher.stop();
        event.socket.closed();
      });
      page.advance(1_000);
      expect(calls).toBe(1);
      expect(socket.readyState).toBe(3);
    });
  });

  describe('#isKeepalive', () => {
    it("tells the server's keepalive apart from the app's messages", () => {
      const { watcher } = setup({ silenceMs: 1_000 });
      expect(watcher.isKeepalive({ data: '' })).toBe(true);
      expect(watcher.isKeepalive({ data: 'hello' })).toBe(false);
      expect(watcher.isKeepalive({ data: new ArrayBuffer(0) })).toBe(false);
      const custom = setup({ silenceMs: 1_000, keepaliveMessage: '{"t":"ka"}' }).watcher;
      expect(custom.isKeepalive({ data: '{"t":"ka"}' })).toBe(true);
      expect(custom.isKeepalive({ data: '' })).toBe(false);
    });
  });

  // After engine.io's test/server.js (socketio/socket.io, packages/engine.io): the heartbeat's
  // pingInterval + pingTimeout becomes the server's keepaliveMs and the page's silenceMs.
  describe('engine.io heartbeat cases', () => {
    it('"should trigger on client if server does not meet ping timeout": a server that goes quiet after the handshake', () => {
      // pingInterval 50, pingTimeout 30: the client closes with "ping timeout" 80 ms after the last ping.
      const { page, socket, dead } = setup({ silenceMs: 80 });
      page.advance(50);
      socket.receive(''); // the first keepalive, then the server goes inactive
      page.advance(79);
      expect(dead).toEqual([]);
      page.advance(1);
      expect(dead).toHaveLength(1);
    });

    it('"should not timeout after an upgrade": a server that keeps its interval is never timed out', () => {
      // pingInterval 200, pingTimeout 20, watched for 500 ms.
      const { page, socket, dead } = setup({ silenceMs: 220 });
      for (let t = 200; t <= 500; t += 200) {
        page.advanceTo(t);
        socket.receive('');
      }
      page.advanceTo(500);
      expect(dead).toEqual([]);
    });
  });
});

describe('watch', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("watches with the runtime's clock and timers", () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const socket = new FakeWhatwgSocket();
    const watcher = watch(socket, { silenceMs: 1_000 });
    expect(watcher).toBeInstanceOf(SilenceWatch);
    expect(watcher).toBeInstanceOf(EventTarget);
    const dead: number[] = [];
    watcher.addEventListener('dead', (event) => dead.push(event.silentMs));
    vi.advanceTimersByTime(600);
    socket.receive('');
    vi.advanceTimersByTime(999);
    expect(dead).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(dead).toEqual([1_000]);
    expect(socket.closeCalls).toEqual([{ code: 1000, reason: 'server silent' }]);
  });

  it('refuses a bad socket or option before touching the socket', () => {
    const socket = new FakeWhatwgSocket();
    expect(() => watch(socket, { silenceMs: -1 })).toThrow(RangeError);
    expect(() => watch({} as FakeWhatwgSocket, { silenceMs: 1 })).toThrow(TypeError);
    expect(socket.listenerTotal).toBe(0);
  });
});
