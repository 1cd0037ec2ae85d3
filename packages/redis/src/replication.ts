/**
 * The replication barrier behind `waitForReplicas`: after a write, wait until the shard's replicas have it.
 *
 * Redis's `WAIT n timeout` blocks the connection it is sent on until `n` replicas acknowledged
 * every write that connection made before it, or the timeout passes. Two things follow:
 *
 * - One WAIT covers every earlier write of the connection, so concurrent writers of a shard share
 *   one round: a writer whose write finished while a round was under way joins the next round (the
 *   current WAIT was sent before its write), and at most one round per shard is under way.
 * - A WAIT for replicas that do not exist (a replica promoted by a failover leaves its shard with
 *   none) blocks the shared connection for its whole timeout, and every command queued behind it
 *   with it. So each round first asks `INFO replication` how many replicas are connected and
 *   waits for at most those.
 *
 * A keyless command goes to a random node of a Cluster: both pipelines start with an `EXISTS` of
 * one of the shard's keys, which routes them to the shard's master, the node of the write.
 */

type Pipeline = {
  exists(key: string): Pipeline;
  info(section: string): Pipeline;
  wait(n: number, ms: number): Pipeline;
  exec(): Promise<[Error | null, unknown][] | null>;
};

async function exec(pipeline: Pipeline): Promise<unknown[]> {
  const results = await pipeline.exec();
  if (results === null) throw new Error('Connection is closed (pipeline discarded)');
  for (const [error] of results) if (error) throw error;
  return results.map(([, value]) => value);
}

export class ReplicationBarrier {
  private readonly running = new Map<string, Promise<void>>();
  private readonly waiting = new Map<string, Promise<void>>();

  constructor(
    private readonly client: { pipeline(): unknown },
    private readonly replicas: number,
    private readonly timeoutMs: number,
  ) {}

  /** Resolves once the writes this process made on `key`'s node so far reached the replicas. */
  wait(key: string): Promise<void> {
    const waiting = this.waiting.get(key);
    if (waiting !== undefined) return waiting;
    const running = this.running.get(key);
    if (running === undefined) return this.start(key);
    const next = running
      .catch(() => undefined)
      .then(() => {
        this.waiting.delete(key);
        return this.start(key);
      });
    this.waiting.set(key, next);
    return next;
  }

  private start(key: string): Promise<void> {
    const round = this.round(key).finally(() => {
      if (this.running.get(key) === round) this.running.delete(key);
    });
    this.running.set(key, round);
    return round;
  }

  private async round(key: string): Promise<void> {
    const [, info] = await exec((this.client.pipeline() as Pipeline).exists(key).info('replication'));
    const connected = Number(/connected_slaves:(\d+)/.exec(String(info))?.[1] ?? 0);
    const needed = Math.min(this.replicas, connected);
    if (needed === 0) return;
    const [, acked] = await exec((this.client.pipeline() as Pipeline).exists(key).wait(needed, this.timeoutMs));
    if (Number(acked) < needed)
      throw new Error(`only ${String(acked)} of ${needed} replicas acknowledged the write within ${this.timeoutMs} ms`);
  }
}
