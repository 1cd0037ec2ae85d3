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
 */

/**
 * Per pass: the projects it runs, and the alias each peer resolves to (root devDependencies). The
 * floor of a one-major range is installed at its exact version (koa 3.0.0, @opentelemetry/api
 * 1.7.0); a peer with two majors keeps the older one (express 4, ioredis 5). undici 6, 7 and 8 and
 * ws 8.0, 8.16 and the newest are run side by side inside the fetch and ws suites themselves (their
 * `undici6`/`undici8` and `ws-8.0`/`ws-8.16` aliases), so they need no pass; a peer whose suite
 * cannot do that adds itself here.
 */
export const passes = {
  oldest: {
    projects: ['redis', 'http', 'otel'],
    peers: {
      ioredis: 'ioredis-5',
      express: 'express4',
      koa: 'koa-3.0',
      '@opentelemetry/api': 'opentelemetry-api-1.7',
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
