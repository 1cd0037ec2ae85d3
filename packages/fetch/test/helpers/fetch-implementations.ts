/**
 * The fetch functions the integration tests run against: Node's global fetch and `undici.fetch` of each supported undici major.
 */
import { createRequire } from 'node:module';
import * as undici7 from 'undici';
import * as undici6 from 'undici6';

const require = createRequire(import.meta.url);

/** The part of an undici Agent the tests use. */
export interface AgentLike {
  dispatch(options: unknown, handler: unknown): boolean;
  close(): Promise<void>;
}

/** One fetch implementation: its fetch and classes, and the major of the undici it is built on. */
export interface FetchImplementation {
  readonly name: string;
  /** True for Node's global fetch (its undici is the runtime's). */
  readonly global: boolean;
  readonly fetch: typeof globalThis.fetch;
  /** fetch sends only its own undici's FormData as multipart (another's as the string "[object FormData]"). */
  readonly FormData: typeof FormData;
  readonly Request: typeof Request;
  readonly Response: typeof Response;
  /** The Agent class of the implementation's undici (for global fetch, that of the runtime's global dispatcher). */
  readonly Agent: () => new (options?: object) => AgentLike;
  readonly undiciMajor: number;
}

/** undici 8 needs Node >= 22.19 (its `engines`; on Node 20 it throws while loading). */
function undici8Runs(): boolean {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  return major > 22 || (major === 22 && minor >= 19);
}

type UndiciModule = typeof undici7;

function implementation(name: string, module: UndiciModule, pkg: string): FetchImplementation {
  const version = (require(`${pkg}/package.json`) as { version: string }).version;
  return {
    name,
    global: false,
    fetch: module.fetch as unknown as typeof globalThis.fetch,
    FormData: module.FormData,
    Request: module.Request as unknown as typeof Request,
    Response: module.Response as unknown as typeof Response,
    Agent: () => module.Agent,
    undiciMajor: Number(version.split('.')[0]),
  };
}

/** The runtime's own undici Agent class: that of the global dispatcher fetch uses (created by its first fetch). */
function runtimeAgent(): new (options?: object) => AgentLike {
  const globals = globalThis as unknown as Record<symbol, object | undefined>;
  const dispatcher =
    globals[Symbol.for('undici.globalDispatcher.2')] ?? globals[Symbol.for('undici.globalDispatcher.1')];
  return dispatcher!.constructor as new (options?: object) => AgentLike;
}

/**
 * Node's global fetch (undici 6 on Node 20 and 22, 7 on Node 24, 8 on Node 26) and `undici.fetch`
 * of undici 6, 7 and 8 (8 where it runs: Node >= 22.19), each installed as a package of its own
 * (`undici6` and `undici8` are npm aliases beside `undici`, which is 7).
 */
export const FETCH_IMPLEMENTATIONS: readonly FetchImplementation[] = [
  {
    name: 'global fetch',
    global: true,
    fetch: globalThis.fetch,
    FormData: globalThis.FormData,
    Request: globalThis.Request,
    Response: globalThis.Response,
    Agent: runtimeAgent,
    undiciMajor: Number(process.versions.undici?.split('.')[0]),
  },
  implementation('undici.fetch 6', undici6 as unknown as UndiciModule, 'undici6'),
  implementation('undici.fetch 7', undici7, 'undici'),
  ...(undici8Runs() ? [implementation('undici.fetch 8', require('undici8') as UndiciModule, 'undici8')] : []),
];

/** {@link FETCH_IMPLEMENTATIONS} as `describe.each` rows: `[name, implementation]`. */
export const FETCH_ROWS = FETCH_IMPLEMENTATIONS.map((impl) => [impl.name, impl] as const);
