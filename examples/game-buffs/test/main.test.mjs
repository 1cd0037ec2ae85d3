import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCombat } from '../src/combat.mjs';
import { main } from '../src/main.mjs';

/** The whole fight: [game time ms, event type, key], in the order the loop produced them. */
const EXPECTED_LOG = [
  [0, 'apply', 'hero:haste'],
  [0, 'cast', 'hero:fireball'],
  [500, 'tick', 'ogre:burn'],
  [500, 'refused', 'hero:fireball'],
  [1000, 'tick', 'ogre:burn'],
  [1000, 'extend', 'hero:haste'],
  [1000, 'stack', 'hero:poison'],
  [1250, 'stack', 'hero:poison'],
  [1500, 'tick', 'ogre:burn'],
  [1500, 'stack', 'hero:poison'],
  [1500, 'apply', 'hero:shield'],
  [2000, 'cooldown-ready', 'hero:fireball'],
  [2000, 'tick', 'ogre:burn'],
  [2000, 'cast', 'hero:fireball'],
  [2500, 'tick', 'ogre:burn'],
  [2500, 'dispel', 'hero:shield'],
  [3000, 'tick', 'ogre:burn'],
  [3000, 'pause', '*'],
  [4000, 'resume', '*'],
  [4250, 'expire', 'hero:poison'],
  [4500, 'expire', 'hero:poison'],
  [4500, 'tick', 'ogre:burn'],
  [5000, 'cooldown-ready', 'hero:fireball'],
  [5000, 'tick', 'ogre:burn'],
  [6000, 'expire', 'hero:haste'],
];

function text(log, t, type) {
  return log.find((e) => e.t === t && e.type === type)?.text;
}

describe('game-buffs', () => {
  describe('combat', () => {
    it('produces the exact event log of the scripted fight', () => {
      const { log, steps, final } = runCombat();
      expect(steps).toBe(161);
      expect(log.map((e) => [e.t, e.type, e.key])).toEqual(EXPECTED_LOG);
      expect(final).toEqual({ ogreHp: 20, heroArmor: 20, effects: 0, cooldowns: 0 });
    });

    it('produces the same log, texts included, on every run', () => {
      expect(runCombat().log).toEqual(runCombat().log);
    });

    it('refuses a spell on cooldown, extends, stacks, dispels and pauses as the policies say', () => {
      const { log } = runCombat();
      expect(text(log, 500, 'refused')).toBe('Fireball refused: on cooldown, 1500 ms left');
      expect(text(log, 1000, 'extend')).toBe('Haste extended by 2000 ms: 4000 ms left');
      expect(text(log, 1500, 'stack')).toBe('ogre poisons hero: 2 stack(s) (at most 2: the oldest stack is dropped), armor 12');
      expect(text(log, 2500, 'dispel')).toBe('ogre dispels the shield with 3000 ms left (no expiry fires)');
      expect(log.some((e) => e.type === 'expire' && e.key === 'hero:shield')).toBe(false);
      expect(text(log, 3000, 'pause')).toBe('match paused: Haste keeps 2000 ms');
      expect(text(log, 4000, 'resume')).toBe('match resumed after 1000 ms: Haste still has 2000 ms');
      expect(log.filter((e) => e.key === 'ogre:burn' && e.type === 'tick')).toHaveLength(8);
    });
  });

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
