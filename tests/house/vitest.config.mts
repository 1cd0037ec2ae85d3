import { defineProject } from 'vitest/config';

// The house rules that a reader checks by eye, checked by tests: module headers, tests mirroring sources.
export default defineProject({
  test: {
    name: 'house',
    include: ['**/*.test.ts'],
    testTimeout: 10_000,
  },
});
