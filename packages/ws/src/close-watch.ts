/**
 * CloseWatch: how a heartbeat hears that a watched socket is closing, without joining its `'close'` listeners.
 *
 * A ws server that tracks its clients (the default) puts one `'close'` listener on every socket.
 * Node's EventEmitter keeps a single listener as the function itself, so a second one turns it
 * into an array per socket, the largest item of the heartbeat's heap per connection (figures in
 * benchmarks/README.md, "ws: measurements behind the source comments").
 *
 * So the watch listens to the socket's frame reader instead: ws's `_receiver`, a Writable stream
 * whose listener table Node creates with a slot for `'finish'` and one for `'close'` (filling an
 * empty slot costs no memory). ws ends the reader when the transport ends or closes
 * (`socketOnEnd`, `socketOnClose`); it then emits `'finish'`, and only after that, from its own
 * `'finish'` listener added later, does ws emit the socket's `'close'`. A reader that failed on a
 * bad frame is destroyed instead and emits `'close'`, while ws closes the socket. Either way the
 * heartbeat lets go of the socket before (or as) it is CLOSED, and the user's listener lists are
 * left alone: `ws.listeners('close')` reads the same as without a heartbeat, and
 * `ws.removeAllListeners()` cannot take this hook.
 *
 * The reader is found by its shape, and the socket from the reader by the one symbol-keyed
 * property that points back to it (ws's `kWebSocket`), both through ws-internals.ts. A socket
 * without such a reader (a stand-in, another implementation) gets a plain `'close'` listener. One case is not seen: ws
 * closing a paused socket whose buffered bytes then fail to parse removes the reader's listeners
 * before its `'close'`; the heartbeat then drops the record at its next check, which finds the
 * socket CLOSED (as it does after a user removed a plain `'close'` listener).
 */
import type { WebSocket } from 'ws';
import { frameReaderOf, socketOfReader, type FrameReader } from './ws-internals.js';

/** See the module comment. */
export class CloseWatch {
  /** On a reader: `this` is the reader. */
  private readonly onReaderEnd: (this: FrameReader) => void;
  /** On a socket without a reader: `this` is the socket. */
  private readonly onSocketClose: (this: WebSocket) => void;

  /** @param closing - called once with each watched socket that is closing or closed */
  constructor(closing: (socket: WebSocket) => void) {
    this.onReaderEnd = function (this: FrameReader): void {
      const socket = socketOfReader(this);
      if (socket !== undefined) closing(socket);
    };
    this.onSocketClose = function (this: WebSocket): void {
      closing(this);
    };
  }

  /** Starts watching `socket` (an OPEN one: ws gives it its reader before `'open'`). */
  watch(socket: WebSocket): void {
    const reader = frameReaderOf(socket);
    if (reader === undefined) {
      socket.on('close', this.onSocketClose);
      return;
    }
    reader.on('finish', this.onReaderEnd);
    reader.on('close', this.onReaderEnd);
  }

  /** Stops watching `socket`. */
  unwatch(socket: WebSocket): void {
    const reader = frameReaderOf(socket);
    if (reader !== undefined) {
      reader.removeListener('finish', this.onReaderEnd);
      reader.removeListener('close', this.onReaderEnd);
    }
    socket.removeListener('close', this.onSocketClose);
  }
}
