/**
 * The hand-written presence pattern RedisPresence is measured against (issue 38): per member, a
 * key `presence:<member>` holding the id of the server that last saw it, with a 30 s TTL that
 * every server refreshes every 15 s for its members (one pipeline of EXPIREs), and, when a
 * member's last connection on a server goes, a `setTimeout` of the grace after which the server
 * deletes the key and announces the leave, unless the member came back (here or, the key then
 * names another server, elsewhere). The timeout dies with the server that holds it: a killed
 * server's members never get a leave, their keys just expire.
 */
import { randomBytes } from 'node:crypto';

export class TtlPresence {
  /**
   * @param {import('ioredis').Redis} redis
   * @param {{ graceMs: number, ttlSeconds?: number, refreshMs?: number, onLeave: (member: string) => void }} options
   */
  constructor(redis, { graceMs, ttlSeconds = 30, refreshMs = 15_000, onLeave }) {
    this.redis = redis;
    this.id = randomBytes(6).toString('base64url');
    this.graceMs = graceMs;
    this.ttlSeconds = ttlSeconds;
    this.onLeave = onLeave;
    /** @type {Map<string, number>} connections per member on this server */
    this.local = new Map();
    /** @type {Map<string, NodeJS.Timeout>} */
    this.graces = new Map();
    this.refresh = setInterval(() => void this.refreshAll(), refreshMs);
  }

  async join(member) {
    const count = (this.local.get(member) ?? 0) + 1;
    this.local.set(member, count);
    if (count > 1) return;
    clearTimeout(this.graces.get(member));
    this.graces.delete(member);
    await this.redis.set(`presence:${member}`, this.id, 'EX', this.ttlSeconds);
  }

  async leave(member) {
    const count = (this.local.get(member) ?? 0) - 1;
    if (count > 0) return void this.local.set(member, count);
    this.local.delete(member);
    this.graces.set(
      member,
      setTimeout(async () => {
        this.graces.delete(member);
        if (this.local.has(member)) return;
        const holder = await this.redis.get(`presence:${member}`);
        if (holder !== this.id) return; // back on another server (or gone already)
        await this.redis.del(`presence:${member}`);
        this.onLeave(member);
      }, this.graceMs),
    );
  }

  async refreshAll() {
    const pipeline = this.redis.pipeline();
    for (const member of this.local.keys()) pipeline.expire(`presence:${member}`, this.ttlSeconds);
    await pipeline.exec();
  }

  stop() {
    clearInterval(this.refresh);
    for (const timeout of this.graces.values()) clearTimeout(timeout);
  }
}
