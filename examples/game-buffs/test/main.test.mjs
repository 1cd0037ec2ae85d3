import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

describe('main', () => {
  describe('durable buffs', () => {
    function expectSurvivedRestart(durable) {
      expect(durable.pending).toEqual([
        { id: 'player:42:xp-boost', state: 'scheduled' },
        { id: 'player:7:rested', state: 'scheduled' },
        { id: 'player:9:curse', state: 'none' },
      ]);
      expect(durable.fired.map((f) => [f.id, f.server, f.attempts])).toEqual([
        ['player:7:rested', 2, 1],
        ['player:42:xp-boost', 2, 1],
      ]);
      expect(durable.fired[1].payload).toEqual({ player: 42, effect: 'XP x2' });
      for (const f of durable.fired) {
        expect(f.lateMs).toBeGreaterThanOrEqual(0);
        expect(f.lateMs).toBeLessThan(1_000);
      }
    }

    it('fire after a restart on the embedded stand-in when no Redis URL is given', async () => {
      const lines = [];
      const result = await main({ redisUrl: undefined, print: (line) => lines.push(line) });
      expect(result.durable.backend).toBe('ioredis-mock');
      expectSurvivedRestart(result.durable);
      expect(result.summary).toBe('25 deterministic combat events in 161 steps; 2/2 durable buffs fired after a restart (ioredis-mock)');
      expect(lines.join('\n')).toContain('server 2 starts and finds player:42:xp-boost: scheduled');
    });

    describe('on a real redis-server', () => {
      let server;
      let dir;

      beforeAll(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'game-buffs-redis-'));
        const port = await freePort();
        server = { port, child: spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }) };
        await waitForPort(port);
      });

      afterAll(async () => {
        if (server?.child.exitCode === null) {
          server.child.kill('SIGKILL');
          await new Promise((resolve) => server.child.once('exit', resolve));
        }
        fs.rmSync(dir, { recursive: true, force: true });
      });

      it('fire after a restart when REDIS_URL points at it, and leave no keys behind', async () => {
        const redisUrl = `redis://127.0.0.1:${server.port}`;
        const result = await main({ redisUrl, print: () => undefined });
        expect(result.durable.backend).toBe('redis');
        expectSurvivedRestart(result.durable);
        const redis = new Redis(redisUrl);
        try {
          expect(await redis.keys('*')).toEqual([]);
        } finally {
          await redis.quit();
        }
      });
    });
  });
});

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function waitForPort(port) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => socket.end(() => resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
