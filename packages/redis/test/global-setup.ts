/**
 * Makes sure Debian's redis-server is installed (apt-get, when missing) and starts one for the
 * run on a free loopback port; tests read its URL with `inject('redisUrl')`. Stopped at teardown.
 */
import type { TestProject } from 'vitest/node';
import { ensureRedisInstalled, startRedisServer } from './helpers/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureRedisInstalled();
  const server = await startRedisServer();
  project.provide('redisUrl', server.url);
  return () => server.stop();
}
