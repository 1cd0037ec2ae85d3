import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-llm-stream-idle',
    include: ['test/**/*.test.mjs'],
    testTimeout: 30_000,
  },
});
