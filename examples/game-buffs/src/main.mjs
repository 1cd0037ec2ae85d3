/**
 * game-buffs: the game-server case. A 20 Hz fixed-step loop on a ManualClock drives buffs and
 * cooldowns with TimerSet (deterministic), and durable buffs go through @tickwheel/redis and
 * survive a server restart.
 *
 * Run: `node examples/game-buffs/src/main.mjs` (set REDIS_URL to use a real Redis).
 */
import { pathToFileURL } from 'node:url';
import { runCombat, STEP_MS } from './combat.mjs';
import { runDurable } from './durable.mjs';

function seconds(ms) {
  return `${(ms / 1000).toFixed(3)} s`;
}

/**
 * Runs the fight and the durable-buff restart, printing a readable account.
 *
 * @param {{ redisUrl?: string, print?: (line: string) => void }} [options] - `redisUrl` defaults to
 *   `process.env.REDIS_URL` (the embedded ioredis-mock stand-in when unset); `print` defaults to console.log
 * @returns {Promise<{ summary: string, combat: object, durable: object }>}
 */
export async function main({ redisUrl = process.env.REDIS_URL, print = console.log } = {}) {
  const combat = runCombat();
  print(`Combat: ${combat.steps} steps of a ${1000 / STEP_MS} Hz loop on a ManualClock (loop clock shown)`);
  for (const event of combat.log) print(`  ${seconds(event.t).padStart(9)}  ${event.text}`);
  print(
    `  final: ogre hp ${combat.final.ogreHp}, hero armor ${combat.final.heroArmor}, ${combat.final.effects} effects and ${combat.final.cooldowns} cooldowns left`,
  );

  const durable = await runDurable({ redisUrl });
  print(
    `Durable buffs on ${durable.backend === 'redis' ? `Redis at ${redisUrl}` : 'ioredis-mock (embedded stand-in; set REDIS_URL for a real Redis)'} (wall-clock ms):`,
  );
  for (const event of durable.events)
    print(`  ${String(event.t).padStart(5)} ms  [server ${event.server}] ${event.text}`);

  const survived = durable.fired.filter((f) => f.server === 2).length;
  const summary =
    `${combat.log.length} deterministic combat events in ${combat.steps} steps; ` +
    `${survived}/2 durable buffs fired after a restart (${durable.backend})`;
  return { summary, combat, durable };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
