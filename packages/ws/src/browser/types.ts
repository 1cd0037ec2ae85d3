/**
 * The public types of @tickwheel/ws/browser: the socket it watches and the options of watch().
 */

/**
 * What `watch()` needs of a socket: the part of the WHATWG `WebSocket` interface it uses. A
 * browser's `WebSocket`, Node 22+'s global one, Deno's, Bun's and ws's `WebSocket` all have it.
 */
export interface WatchableSocket {
  /** 0 CONNECTING, 1 OPEN, 2 CLOSING, 3 CLOSED. */
  readonly readyState: number;
  addEventListener(type: 'open' | 'message' | 'close', listener: () => void): void;
  removeEventListener(type: 'open' | 'message' | 'close', listener: () => void): void;
  close(code?: number, reason?: string): void;
}

/** Options of `watch()`. */
export interface WatchOptions {
  /**
   * Declare the server dead once no message has arrived for this long, in ms (> 0). Messages are
   * all the page can see: protocol pings never reach it. Pair it with the server's `keepaliveMs`:
   * the server then sends something at least every 2 × keepaliveMs (see its README), so choose
   * silenceMs above that plus a round trip, say `2 * keepaliveMs + 5_000`.
   */
  silenceMs: number;
  /**
   * The text the server sends as its keepalive (the server's `keepaliveMessage`), so that
   * `isKeepalive(event)` can tell them apart from the app's messages. Default `''`, as the server's.
   */
  keepaliveMessage?: string;
  /** The close code sent when the server is declared dead: 1000 or 3000-4999 (what a page may send). Default 1000. */
  closeCode?: number;
  /** The close reason sent with it (<= 123 bytes of UTF-8). Default `'server silent'`. */
  closeReason?: string;
}
