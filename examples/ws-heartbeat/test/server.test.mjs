import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startLivenessServer } from '../src/server.mjs';

describe('server', () => {
  describe('startLivenessServer', () => {
    it('is served at / and its WebSocket gets status messages naming the connection', async () => {
      const server = await startLivenessServer({ pingIntervalMs: 100, pongTimeoutMs: 50, statusEveryMs: 50 });
      try {
        const res = await fetch(server.url);
        expect(res.status).toBe(200);
        const html = await res.text();
        expect(html).toContain('ws://${location.host}/?name=browser');
        expect((await fetch(`${server.url}missing`)).status).toBe(404);

        const ws = new WebSocket(`${server.wsUrl}?name=browser`);
        const statuses = [];
        ws.on('message', (data) => statuses.push(JSON.parse(String(data))));
        // Quiet for a while: the server pings (ws answers) and reports the round trip.
        await new Promise((resolve) => setTimeout(resolve, 400));
        ws.close();
        expect(statuses[0]).toMatchObject({
          type: 'status',
          name: 'browser',
          limits: { pingIntervalMs: 100, pongTimeoutMs: 50 },
        });
        const last = statuses.at(-1);
        expect(last.pingsSent).toBeGreaterThan(0);
        expect(last.rttMs).toBeGreaterThanOrEqual(0);
        expect(last.peers).toEqual([{ name: 'browser', awaitingPong: expect.any(Boolean) }]);
      } finally {
        await server.close();
      }
    });
  });
});
