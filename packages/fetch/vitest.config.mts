import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'fetch',
    include: ['test/**/*.test.ts'],
  },
});
