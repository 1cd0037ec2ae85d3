/**
 * The other ends of the adapters' peer ranges: which installed npm alias stands in for each peer in an extra test pass.
 *
 * The workspace develops and tests against the newest supported version of each peer (its
 * devDependencies). The oldest supported major of a peer with more than one is installed beside
 * it under an npm alias (root devDependencies,
 * e.g. `"ioredis-5": "npm:ioredis@^5.11.1"`), so `npm ci` brings both and the extra pass needs no
 * network. `TICKWHEEL_PEERS=<pass>` makes the adapters' vitest projects resolve each peer of that
 * pass to its alias (`peerAliases()` in their configs), and forked test fixtures import it by the
 * name `peerModule()` gives them; `.ci/run` runs each pass once, on one Node, after the main runs.
 *
 * A peer with a third supported major (undici 6, 7 and 8) gets a pass per further major.
 */

/**
 * Per pass: the projects it runs, and the alias each peer resolves to. ioredis is the adapters'
 * one peer with two supported majors so far (5 and 6); ws 8, grpc-js 1 and @opentelemetry/api 1
 * have one, the newest, which the ordinary run tests. undici (6, 7 and 8) gets its passes here
 * once the fetch suite runs on `undici.fetch` of each: add an alias such as
 * `"undici-6": "npm:undici@^6.29.1"` to the root devDependencies and a pass
 * `{ projects: ['fetch'], peers: { undici: 'undici-6' } }`.
 */
export const passes = {
  oldest: {
    projects: ['redis', 'otel'],
    peers: {
      ioredis: 'ioredis-5',
    },
  },
};

/** The pass named by TICKWHEEL_PEERS, or undefined for the ordinary run. */
function currentPass() {
  const name = process.env.TICKWHEEL_PEERS;
  if (name === undefined || name === '') return undefined;
  const pass = passes[name];
  if (pass === undefined) {
    throw new RangeError(`TICKWHEEL_PEERS must be one of ${Object.keys(passes).join(', ')}, got ${name}`);
  }
  return pass;
}

/**
 * vitest `resolve.alias` entries for the current pass: each peer's bare name (and its subpaths)
 * to its alias; none in the ordinary run.
 */
export function peerAliases() {
  const pass = currentPass();
  if (pass === undefined) return [];
  return Object.entries(pass.peers).map(([peer, alias]) => ({
    find: new RegExp(`^${peer.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?=/|$)`),
    replacement: alias,
  }));
}

/** The module name a forked fixture imports for `peer`: its alias in the current pass, else `peer`. */
export function peerModule(peer) {
  return currentPass()?.peers[peer] ?? peer;
}
