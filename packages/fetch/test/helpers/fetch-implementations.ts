/**
 * The fetch functions the integration tests run against: Node's global fetch and `undici.fetch` of each supported undici major.
 */
import { createRequire } from 'node:module';
import * as undici7 from 'undici';
import * as undici6 from 'undici6';

const require = createRequire(import.meta.url);

/** One fetch implementation: its name, its fetch and FormData, and the major of the undici it is built on. */
export interface FetchImplementation {
  readonly name: string;
  readonly fetch: typeof globalThis.fetch;
  /** fetch sends only its own undici's FormData as multipart (another's as the string "[object FormData]"). */
  readonly FormData: typeof FormData;
  readonly Request: typeof Request;
  readonly undiciMajor: number;
}

/** undici 8 needs Node >= 22.19 (its `engines`; on Node 20 it throws while loading). */
function undici8Runs(): boolean {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  return major > 22 || (major === 22 && minor >= 19);
}

function implementation(
  name: string,
  module: { fetch: unknown; FormData: unknown; Request: unknown },
  version: string,
): FetchImplementation {
  return {
    name,
    fetch: module.fetch as typeof globalThis.fetch,
    FormData: module.FormData as typeof FormData,
    Request: module.Request as typeof Request,
    undiciMajor: Number(version.split('.')[0]),
  };
}

const versionOf = (pkg: string): string => (require(`${pkg}/package.json`) as { version: string }).version;

/**
 * Node's global fetch (undici 6 on Node 20 and 22, 7 on Node 24, 8 on Node 26) and `undici.fetch`
 * of undici 6, 7 and 8 (8 where it runs: Node >= 22.19).
 */
export const FETCH_IMPLEMENTATIONS: readonly FetchImplementation[] = [
  {
    name: 'global fetch',
    fetch: globalThis.fetch,
    FormData: globalThis.FormData,
    Request: globalThis.Request,
    undiciMajor: Number(process.versions.undici?.split('.')[0]),
  },
  implementation('undici.fetch 6', undici6, versionOf('undici6')),
  implementation('undici.fetch 7', undici7, versionOf('undici')),
  ...(undici8Runs()
    ? [implementation('undici.fetch 8', require('undici8') as typeof undici7, versionOf('undici8'))]
    : []),
];
