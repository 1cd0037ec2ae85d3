/**
 * A scripted fight on a 20 Hz fixed-step loop. Time is a ManualClock that the loop advances by
 * exactly 50 ms per step, so the buffs, debuffs, cooldowns and damage-over-time effects (two
 * TimerSets on one TimingWheel) fire at the same times in the same order on every run. The log
 * shows the loop's clock; a pause and a stretch of bullet time (`setTimeScale(0.5)`) make the
 * sets' game time fall behind it.
 */
import { ManualClock, TimerSet, TimingWheel } from '@tickwheel/core';

/** 20 Hz: one simulation step every 50 ms of game time. */
export const STEP_MS = 50;

/**
 * The fight, as what happens at which step. Each action runs after the wheel has fired
 * everything due up to that step.
 */
const SCRIPT = [
  [0, (w) => w.castHaste(3_000)],
  [0, (w) => w.castFireball()],
  [10, (w) => w.castFireball()],
  [20, (w) => w.extendHaste(2_000)],
  [20, (w) => w.poison()],
  [25, (w) => w.poison()],
  [30, (w) => w.poison()],
  [30, (w) => w.castShield(4_000)],
  [40, (w) => w.castFireball()],
  [50, (w) => w.dispelShield()],
  [60, (w) => w.pauseMatch()],
  [80, (w) => w.resumeMatch()],
  [84, (w) => w.bulletTime(0.5)],
  [104, (w) => w.bulletTime(1)],
];

/** Last step of the run: everything has expired by then. */
const LAST_STEP = 160;

/** A fight's world: one wheel on a manual clock, one TimerSet of effects, one of cooldowns. */
class World {
  constructor() {
    this.clock = new ManualClock(0);
    this.wheel = new TimingWheel({ clock: this.clock });
    this.log = [];
    this.ogreHp = 100;
    this.heroArmor = 20;
    this.effects = new TimerSet({
      wheel: this.wheel,
      onExpire: (key, value, info) => this.onEffectExpired(key, value, info),
    });
    this.cooldowns = new TimerSet({
      wheel: this.wheel,
      onExpire: (key) => this.record('cooldown-ready', key, `${key} is ready again`),
    });
  }

  record(type, key, text) {
    this.log.push({ t: this.clock.now(), type, key, text });
  }

  castHaste(durationMs) {
    this.effects.set('hero:haste', durationMs, { speedPct: 30 });
    this.record('apply', 'hero:haste', `hero gains Haste (+30% speed) for ${durationMs} ms`);
  }

  extendHaste(byMs) {
    this.effects.set('hero:haste', byMs, { speedPct: 30 }, { policy: 'extend' });
    this.record(
      'extend',
      'hero:haste',
      `Haste extended by ${byMs} ms: ${this.effects.remaining('hero:haste')} ms left`,
    );
  }

  castFireball() {
    if (this.cooldowns.has('hero:fireball')) {
      this.record(
        'refused',
        'hero:fireball',
        `Fireball refused: on cooldown, ${this.cooldowns.remaining('hero:fireball')} ms left`,
      );
      return;
    }
    this.cooldowns.set('hero:fireball', 2_000, null, { policy: 'ignore' });
    this.ogreHp -= 20;
    // Burn: a periodic effect, 4 ticks of 5 damage every 500 ms; each tick sets the next from onExpire.
    this.effects.set('ogre:burn', 500, { damage: 5, ticksLeft: 4 });
    this.record(
      'cast',
      'hero:fireball',
      `hero casts Fireball: ogre takes 20 (hp ${this.ogreHp}) and burns; 2000 ms cooldown`,
    );
  }

  poison() {
    const before = this.effects.stacks('hero:poison');
    this.effects.set('hero:poison', 2_000, { armor: -4 }, { policy: 'stack', maxStacks: 2 });
    const after = this.effects.stacks('hero:poison');
    this.heroArmor = 20 - 4 * after;
    const dropped = before === after ? ' (at most 2: the oldest stack is dropped)' : '';
    this.record('stack', 'hero:poison', `ogre poisons hero: ${after} stack(s)${dropped}, armor ${this.heroArmor}`);
  }

  castShield(durationMs) {
    this.effects.set('hero:shield', durationMs, { absorb: 50 });
    this.record('apply', 'hero:shield', `priest shields hero (absorbs 50) for ${durationMs} ms`);
  }

  dispelShield() {
    const left = this.effects.remaining('hero:shield');
    this.effects.delete('hero:shield');
    this.record('dispel', 'hero:shield', `ogre dispels the shield with ${left} ms left (no expiry fires)`);
  }

  pauseMatch() {
    this.effects.pause();
    this.cooldowns.pause();
    this.pausedAt = this.clock.now();
    this.record('pause', '*', `match paused: Haste keeps ${this.effects.remaining('hero:haste')} ms`);
  }

  resumeMatch() {
    this.effects.resume();
    this.cooldowns.resume();
    this.record(
      'resume',
      '*',
      `match resumed after ${this.clock.now() - this.pausedAt} ms: Haste still has ${this.effects.remaining('hero:haste')} ms`,
    );
  }

  /** Game speed for both sets: every remaining time is kept in game time and runs out at `factor` speed. */
  bulletTime(factor) {
    this.effects.setTimeScale(factor);
    this.cooldowns.setTimeScale(factor);
    const haste = this.effects.remaining('hero:haste');
    this.record(
      'speed',
      '*',
      factor === 1
        ? `normal speed again: Haste has ${haste} ms of game time left`
        : `bullet time at ${factor}x: Haste has ${haste} ms of game time left, ${haste / factor} ms of wheel time`,
    );
  }

  onEffectExpired(key, value, { stacksLeft }) {
    if (key === 'ogre:burn') {
      this.ogreHp -= value.damage;
      const ticksLeft = value.ticksLeft - 1;
      if (ticksLeft > 0) this.effects.set(key, 500, { ...value, ticksLeft });
      this.record(
        'tick',
        key,
        `burn ticks: ogre takes ${value.damage} (hp ${this.ogreHp}), ${ticksLeft} tick(s) to go`,
      );
      return;
    }
    if (key === 'hero:poison') {
      this.heroArmor = 20 - 4 * stacksLeft;
      this.record('expire', key, `a poison stack wears off: ${stacksLeft} left, armor ${this.heroArmor}`);
      return;
    }
    this.record('expire', key, `${key} wears off`);
  }

  close() {
    this.effects.close();
    this.cooldowns.close();
    this.wheel.close();
  }
}

/**
 * Runs the scripted fight to the end on the fixed-step loop.
 *
 * @returns the event log (game time in ms, type, key, text) and the final state
 */
export function runCombat() {
  const world = new World();
  try {
    for (let step = 0; step <= LAST_STEP; step++) {
      if (step > 0) world.clock.advance(STEP_MS);
      for (const [at, action] of SCRIPT) if (at === step) action(world);
    }
    return {
      steps: LAST_STEP + 1,
      log: world.log,
      final: {
        ogreHp: world.ogreHp,
        heroArmor: world.heroArmor,
        effects: world.effects.size,
        cooldowns: world.cooldowns.size,
      },
    };
  } finally {
    world.close();
  }
}
