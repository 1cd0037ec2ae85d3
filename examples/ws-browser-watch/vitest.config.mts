import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-ws-browser-watch',
    include: ['test/**/*.test.mjs'],
    testTimeout: 30_000,
  },
});
