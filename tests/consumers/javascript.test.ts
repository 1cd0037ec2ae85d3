import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { fileName, runNode, source, writeProject } from './consumer-project.js';
import { snippets } from './snippets.js';

/** Plain JavaScript users of the installed tarballs: an ESM project and a CommonJS project. */
const root = inject('consumerRoot');
const env = { TICKWHEEL_REDIS_SOCKET: inject('redisSocket') };

describe('an ESM project ("type": "module")', () => {
  const dir = path.join(root, 'esm');
  writeProject(dir, {
    'package.json': JSON.stringify({ type: 'module' }),
    ...Object.fromEntries(snippets.map((snippet) => [`${fileName(snippet)}.js`, source(snippet, 'esm')])),
  });

  for (const snippet of snippets) {
    it(`imports ${snippet.entry} by name and runs against the real peer`, () => {
      expect(runNode(path.join(dir, `${fileName(snippet)}.js`), env)).toEqual(snippet.expected);
    });
  }

  it('gets the same instance from import and require(), so there is one shared wheel', () => {
    writeProject(dir, {
      'one-instance.js': `import { createRequire } from 'node:module';
import { sharedWheel, TimingWheel } from '@tickwheel/core';
import { heartbeat } from '@tickwheel/ws';
const require = createRequire(import.meta.url);
console.log(JSON.stringify({
  wheel: require('@tickwheel/core').sharedWheel() === sharedWheel(),
  wheelClass: require('@tickwheel/core').TimingWheel === TimingWheel,
  adapter: require('@tickwheel/ws').heartbeat === heartbeat,
}));
`,
    });
    expect(runNode(path.join(dir, 'one-instance.js'))).toEqual({ wheel: true, wheelClass: true, adapter: true });
  });
});

describe('a CommonJS project ("type": "commonjs")', () => {
  const dir = path.join(root, 'cjs');
  writeProject(dir, {
    'package.json': JSON.stringify({ type: 'commonjs' }),
    ...Object.fromEntries(snippets.map((snippet) => [`${fileName(snippet)}.js`, source(snippet, 'cjs')])),
  });

  for (const snippet of snippets) {
    it(`require()s ${snippet.entry} and runs against the real peer`, () => {
      expect(runNode(path.join(dir, `${fileName(snippet)}.js`), env)).toEqual(snippet.expected);
    });
  }
});
