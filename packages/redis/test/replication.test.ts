import { describe, expect, it } from 'vitest';
import { ReplicationBarrier } from '../src/replication.js';

/**
 * A client whose pipelines record their commands and answer from a script: INFO with
 * `connected_slaves:<replicas>`, WAIT with the next value of `acks` (resolved when the test says).
 */
class FakeClient {
  readonly sent: string[][] = [];
  replicas = 2;
  /** Answer every exec() with null, as ioredis does for a pipeline it discarded. */
  discard = false;
  readonly waits: Array<(acked: number | Error) => void> = [];

  pipeline() {
    const commands: string[][] = [];
    const pipeline = {
      exists: (key: string) => (commands.push(['exists', key]), pipeline),
      info: (section: string) => (commands.push(['info', section]), pipeline),
      wait: (n: number, ms: number) => (commands.push(['wait', String(n), String(ms)]), pipeline),
      exec: (): Promise<[Error | null, unknown][] | null> => {
        this.sent.push(...commands);
        if (this.discard) return Promise.resolve(null);
        const last = commands[commands.length - 1];
        if (last[0] === 'info') {
          return Promise.resolve([
            [null, 1],
            [null, `# Replication\r\nrole:master\r\nconnected_slaves:${this.replicas}\r\n`],
          ]);
        }
        return new Promise((resolve) =>
          this.waits.push((acked) => resolve([[null, 1], acked instanceof Error ? [acked, null] : [null, acked]])),
        );
      },
    };
    return pipeline;
  }
}

/** Lets the barrier's awaited pipelines settle. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('replication', () => {
  describe('ReplicationBarrier#wait', () => {
    it('asks how many replicas are connected, then WAITs for at most those, on the key’s node', async () => {
      const client = new FakeClient();
      client.replicas = 1;
      const barrier = new ReplicationBarrier(client, 2, 500);
      const done = barrier.wait('{ns:0}:due');
      await flush();
      expect(client.sent).toEqual([
        ['exists', '{ns:0}:due'],
        ['info', 'replication'],
        ['exists', '{ns:0}:due'],
        ['wait', '1', '500'],
      ]);
      client.waits[0](1);
      await expect(done).resolves.toBeUndefined();
    });

    it('sends no WAIT when the shard has no replica (it would block the connection for its timeout)', async () => {
      const client = new FakeClient();
      client.replicas = 0;
      await new ReplicationBarrier(client, 1, 500).wait('k');
      expect(client.sent.map(([command]) => command)).toEqual(['exists', 'info']);
    });

    it('rejects, naming the count, when fewer replicas acknowledged than needed', async () => {
      const client = new FakeClient();
      const done = new ReplicationBarrier(client, 2, 500).wait('k');
      await flush();
      client.waits[0](1);
      await expect(done).rejects.toThrow('only 1 of 2 replicas acknowledged the write within 500 ms');
    });

    it('passes on an error of the pipeline', async () => {
      const client = new FakeClient();
      const done = new ReplicationBarrier(client, 1, 500).wait('k');
      await flush();
      client.waits[0](new Error('READONLY You can’t write against a read only replica.'));
      await expect(done).rejects.toThrow(/READONLY/);
    });

    it('rejects when the pipeline was discarded (a closed connection)', async () => {
      const client = new FakeClient();
      client.discard = true;
      await expect(new ReplicationBarrier(client, 1, 500).wait('k')).rejects.toThrow(/Connection is closed/);
    });

    it('shares one round between writers: those who arrive during a round join the next one, together', async () => {
      const client = new FakeClient();
      const barrier = new ReplicationBarrier(client, 1, 500);
      const first = barrier.wait('k');
      await flush();
      const second = barrier.wait('k');
      const third = barrier.wait('k');
      expect(third).toBe(second);
      expect(client.waits).toHaveLength(1);
      client.waits[0](1);
      await first;
      await flush();
      expect(client.waits).toHaveLength(2); // one more round, for both
      client.waits[1](1);
      await Promise.all([second, third]);
      expect(client.sent.filter(([command]) => command === 'wait')).toHaveLength(2);
    });

    it('starts the next round even when the one before failed', async () => {
      const client = new FakeClient();
      const barrier = new ReplicationBarrier(client, 1, 500);
      const first = barrier.wait('k');
      await flush();
      const second = barrier.wait('k');
      client.waits[0](0);
      await expect(first).rejects.toThrow(/only 0 of 1/);
      await flush();
      client.waits[1](1);
      await expect(second).resolves.toBeUndefined();
    });

    it('keeps shards apart: a round on one key does not hold up another', async () => {
      const client = new FakeClient();
      const barrier = new ReplicationBarrier(client, 1, 500);
      const a = barrier.wait('{ns:0}:due');
      const b = barrier.wait('{ns:1}:due');
      await flush();
      expect(client.waits).toHaveLength(2);
      client.waits[1](1);
      await b;
      client.waits[0](1);
      await a;
    });
  });
});
