import { defineProject } from 'vitest/config';
import { peerAliases } from '../../scripts/peer-ends.mjs';

export default defineProject({
  // The peers at the other end of their ranges in a TICKWHEEL_PEERS pass (.ci/run); none otherwise.
  resolve: { alias: peerAliases() },
  test: {
    name: 'otel',
    include: ['test/**/*.test.ts'],
    // The integration tests start real HTTP, gRPC, WebSocket and Redis servers on 127.0.0.1.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
