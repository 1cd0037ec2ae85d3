import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'otel',
    include: ['test/**/*.test.ts'],
    // The integration tests start real HTTP, gRPC, WebSocket and Redis servers on 127.0.0.1.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
