/**
 * The Lua scripts of @tickwheel/redis as typed commands on an ioredis client: their names, signatures and registration.
 *
 * The scripts themselves are in timer-scripts.ts (what RedisTimers runs for its callers),
 * worker-scripts.ts (what a worker runs) and presence-scripts.ts (what RedisPresence runs), over
 * the shared Lua of lua-prelude.ts.
 */
import { HELLO, JOIN, LEAVE, LEFT, REAP, RENEW } from './presence-scripts.js';
import { CANCEL, GET, LIST_FAILED, PURGE_FAILED, RESCHEDULE, RETRY_FAILED, SCHEDULE } from './timer-scripts.js';
import { ACK, CLAIM, EXTEND, FAIL, FORGET_WORKER } from './worker-scripts.js';

type Keys = [
  due: string,
  lease: string,
  timers: string,
  seq: string,
  failed: string,
  reasons: string,
  claims: string,
  index: string,
  buckets: string,
];
/** The shard's keys and the calling client's calls hash (lua-prelude.ts, once). */
type CallKeys = [...Keys, calls: string];

/** The commands {@link defineScripts} adds to a client, typed. Write scripts take the calls hash too. */
export interface ScriptCommands {
  tickwheelSchedule(...args: [...CallKeys, ...string[]]): Promise<[string, string, string]>;
  tickwheelReschedule(...args: [...CallKeys, ...string[]]): Promise<string>;
  tickwheelCancel(...args: [...CallKeys, ...string[]]): Promise<number>;
  tickwheelGet(...args: [...Keys, string]): Promise<string | [string, string, string, string, string, string]>;
  tickwheelClaim(...args: [...Keys, string, string, string, string, string, string, string]): Promise<string[]>;
  tickwheelAck(...args: [...CallKeys, ...string[]]): Promise<string[]>;
  tickwheelExtend(...args: [...CallKeys, ...string[]]): Promise<string>;
  tickwheelFail(...args: [...CallKeys, ...string[]]): Promise<string>;
  tickwheelForgetWorker(...args: [...Keys, string]): Promise<number>;
  tickwheelListFailed(...args: [...Keys, string, string]): Promise<string[]>;
  tickwheelRetryFailed(...args: [...CallKeys, ...string[]]): Promise<number>;
  tickwheelPurgeFailed(...args: [...CallKeys, ...string[]]): Promise<number>;
  tickwheelPresenceHello(...args: [...CallKeys, ...string[]]): Promise<number>;
  tickwheelPresenceJoin(...args: [...CallKeys, ...string[]]): Promise<string>;
  tickwheelPresenceLeave(...args: [...CallKeys, ...string[]]): Promise<string>;
  tickwheelPresenceLeft(...args: [...CallKeys, ...string[]]): Promise<string>;
  tickwheelPresenceReap(...args: [...CallKeys, ...string[]]): Promise<string>;
  tickwheelPresenceRenew(...args: [...CallKeys, ...string[]]): Promise<string>;
}

/** The scripts wrapped by once: they take an eighth key. */
const CALL_SCRIPTS: ReadonlySet<string> = new Set([
  'tickwheelSchedule',
  'tickwheelReschedule',
  'tickwheelCancel',
  'tickwheelAck',
  'tickwheelExtend',
  'tickwheelFail',
  'tickwheelRetryFailed',
  'tickwheelPurgeFailed',
  'tickwheelPresenceHello',
  'tickwheelPresenceJoin',
  'tickwheelPresenceLeave',
  'tickwheelPresenceLeft',
  'tickwheelPresenceReap',
  'tickwheelPresenceRenew',
]);

const SCRIPTS: Record<keyof ScriptCommands, string> = {
  tickwheelSchedule: SCHEDULE,
  tickwheelReschedule: RESCHEDULE,
  tickwheelCancel: CANCEL,
  tickwheelGet: GET,
  tickwheelClaim: CLAIM,
  tickwheelAck: ACK,
  tickwheelExtend: EXTEND,
  tickwheelFail: FAIL,
  tickwheelForgetWorker: FORGET_WORKER,
  tickwheelListFailed: LIST_FAILED,
  tickwheelRetryFailed: RETRY_FAILED,
  tickwheelPurgeFailed: PURGE_FAILED,
  tickwheelPresenceHello: HELLO,
  tickwheelPresenceJoin: JOIN,
  tickwheelPresenceLeave: LEAVE,
  tickwheelPresenceLeft: LEFT,
  tickwheelPresenceReap: REAP,
  tickwheelPresenceRenew: RENEW,
};

interface DefinesCommands {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}

/**
 * Adds the scripts to the client as commands (ioredis sends EVALSHA and falls back to EVAL on
 * NOSCRIPT, per node in a Cluster). Idempotent: several RedisTimers may share one client.
 */
export function defineScripts<C extends object>(client: C): C & ScriptCommands {
  const target = client as unknown as DefinesCommands & Record<string, unknown>;
  for (const [name, lua] of Object.entries(SCRIPTS)) {
    if (typeof target[name] !== 'function')
      target.defineCommand(name, { numberOfKeys: CALL_SCRIPTS.has(name) ? 10 : 9, lua });
  }
  return client as C & ScriptCommands;
}
