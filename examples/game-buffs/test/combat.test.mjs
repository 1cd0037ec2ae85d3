import { describe, expect, it } from 'vitest';
import { runCombat } from '../src/combat.mjs';

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
  // Bullet time from 4200 to 5200: what was due 50 ms later comes 100 ms later, and so on.
  [4200, 'speed', '*'],
  [4300, 'expire', 'hero:poison'],
  [4800, 'expire', 'hero:poison'],
  [4800, 'tick', 'ogre:burn'],
  [5200, 'speed', '*'],
  [5500, 'cooldown-ready', 'hero:fireball'],
  [5500, 'tick', 'ogre:burn'],
  [6500, 'expire', 'hero:haste'],
];

function text(log, t, type) {
  return log.find((e) => e.t === t && e.type === type)?.text;
}

describe('combat', () => {
  describe('runCombat', () => {
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
      expect(text(log, 1500, 'stack')).toBe(
        'ogre poisons hero: 2 stack(s) (at most 2: the oldest stack is dropped), armor 12',
      );
      expect(text(log, 2500, 'dispel')).toBe('ogre dispels the shield with 3000 ms left (no expiry fires)');
      expect(log.some((e) => e.type === 'expire' && e.key === 'hero:shield')).toBe(false);
      expect(text(log, 3000, 'pause')).toBe('match paused: Haste keeps 2000 ms');
      expect(text(log, 4000, 'resume')).toBe('match resumed after 1000 ms: Haste still has 2000 ms');
      expect(text(log, 4200, 'speed')).toBe(
        'bullet time at 0.5x: Haste has 1800 ms of game time left, 3600 ms of wheel time',
      );
      expect(text(log, 5200, 'speed')).toBe('normal speed again: Haste has 1300 ms of game time left');
      expect(log.filter((e) => e.key === 'ogre:burn' && e.type === 'tick')).toHaveLength(8);
    });
  });
});
