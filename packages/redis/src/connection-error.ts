/**
 * The last connection error of an ioredis client, read without touching the client.
 */

/** What this reads of an ioredis `Redis` (its socket) or `Cluster` (its nodes'); nothing is written. */
interface ClientLike {
  readonly status?: unknown;
  readonly stream?: { readonly errored?: unknown } | null;
  nodes?: () => readonly ClientLike[];
}

/**
 * The error the client's last socket was destroyed with (such as `connect ECONNREFUSED
 * 127.0.0.1:6390`), or a Cluster node's, else undefined. ioredis hands connection errors only to
 * `'error'` listeners; a listener of ours would silence its "Unhandled error event" report for
 * an app that has none, so the failed socket is read instead: Node keeps the error that destroyed
 * a stream in `stream.errored`, and ioredis keeps its last socket in `stream` until it reconnects.
 */
export function lastConnectionError(client: unknown): Error | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const own = socketError(client);
  if (own !== undefined) return own;
  const nodes = (client as ClientLike).nodes;
  if (typeof nodes !== 'function') return undefined;
  for (const node of nodes.call(client)) {
    const error = socketError(node);
    if (error !== undefined) return error;
  }
  return undefined;
}

function socketError(client: ClientLike): Error | undefined {
  const errored = client.stream?.errored;
  return errored instanceof Error ? errored : undefined;
}
