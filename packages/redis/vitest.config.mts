import { defineProject } from 'vitest/config';
import { peerAliases } from '../../scripts/peer-ends.mjs';

export default defineProject({
  // The peers at the other end of their ranges in a TICKWHEEL_PEERS pass (.ci/run); none otherwise.
  resolve: { alias: peerAliases() },
  test: {
    name: 'redis',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // The integration tests fork workers and start their own redis-servers: keep them bounded.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
