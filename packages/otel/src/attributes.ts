/**
 * The metric attributes of @tickwheel/otel, after the OpenTelemetry semantic conventions.
 */
import type { Attributes } from '@opentelemetry/api';

/**
 * Metric attributes, named after the OpenTelemetry semantic conventions where one exists
 * (`http.request.method`, `server.address`, `rpc.method`, `error.type`) and under `tickwheel.`
 * where none does. Every value comes from a small set (methods, phases, hosts, method paths),
 * never from a URL path or an id, so the number of series stays bounded.
 */

/** The methods `http.request.method` names as they are; any other is `_OTHER` (semantic conventions, HTTP spans). */
const KNOWN_HTTP_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'QUERY',
  'TRACE',
]);

/** Attributes of an origin, cached: a service talks to few origins and parses each once. */
const originCache = new Map<string, Attributes>();
/** Beyond this many origins the cache starts over rather than growing without bound. */
const ORIGIN_CACHE_LIMIT = 256;

/** `http.request.method`, `server.address`, `server.port` and `url.scheme` of a fetch request. */
export function httpAttributes(method: string, origin: string): Attributes {
  let server = originCache.get(origin);
  if (server === undefined) {
    server = parseOrigin(origin);
    if (originCache.size >= ORIGIN_CACHE_LIMIT) originCache.clear();
    originCache.set(origin, server);
  }
  return { 'http.request.method': KNOWN_HTTP_METHODS.has(method) ? method : '_OTHER', ...server };
}

function parseOrigin(origin: string): Attributes {
  if (!URL.canParse(origin)) return {};
  const url = new URL(origin);
  const scheme = url.protocol.slice(0, -1);
  const port = url.port === '' ? (scheme === 'https' ? 443 : 80) : Number(url.port);
  // An IPv6 host comes bracketed from URL; the attribute holds the bare address.
  const address = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { 'server.address': address, 'server.port': port, 'url.scheme': scheme };
}

/** `rpc.system`, `rpc.service` and `rpc.method` of a gRPC method path `'/pkg.Service/Method'`. */
export function rpcAttributes(path: string): Attributes {
  const slash = path.lastIndexOf('/');
  return slash > 0
    ? { 'rpc.system': 'grpc', 'rpc.service': path.slice(1, slash), 'rpc.method': path.slice(slash + 1) }
    : { 'rpc.system': 'grpc', 'rpc.method': path };
}

/** `error.type`: the class name of what a callback threw, or its type for a non-object. */
export function errorType(error: unknown): string {
  if (error !== null && typeof error === 'object') {
    const name = (error as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' ? name : 'Object';
  }
  return typeof error;
}
