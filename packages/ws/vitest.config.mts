import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'ws',
    include: ['test/**/*.test.ts'],
  },
});
