import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'grpc',
    include: ['test/**/*.test.ts'],
  },
});
