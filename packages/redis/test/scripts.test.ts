import { describe, expect, it } from 'vitest';
import { defineScripts, type ScriptCommands } from '../src/scripts.js';
import { client } from './helpers/script-shard.js';

describe('scripts', () => {
  describe('defineScripts', () => {
    it('adds every command once, and is idempotent on a client that has them', () => {
      const names: (keyof ScriptCommands)[] = [
        'tickwheelSchedule',
        'tickwheelReschedule',
        'tickwheelCancel',
        'tickwheelGet',
        'tickwheelClaim',
        'tickwheelAck',
        'tickwheelExtend',
        'tickwheelFail',
        'tickwheelForgetWorker',
        'tickwheelListFailed',
        'tickwheelRetryFailed',
        'tickwheelPurgeFailed',
        'tickwheelPresenceHello',
        'tickwheelPresenceJoin',
        'tickwheelPresenceLeave',
        'tickwheelPresenceLeft',
        'tickwheelPresenceReap',
        'tickwheelPresenceRenew',
      ];
      for (const name of names) expect(typeof client[name], name).toBe('function');
      const defined: string[] = [];
      const fake = { defineCommand: (name: string) => defined.push(name), tickwheelGet: () => undefined };
      defineScripts(fake);
      expect(defined).toHaveLength(names.length - 1);
      expect(defined).not.toContain('tickwheelGet');
    });
  });
});
