/**
 * socket-record: one hidden slot on a socket for its heartbeat record, as a true private class field.
 *
 * A heartbeat finds a connection's record from the socket in every listener (`'pong'`, reads,
 * the frame reader's end) and in `state()`, `add()` and `remove()`. A `Map<socket, record>`
 * did that for an entry in the map's hash table per connection; this slot costs one property on
 * the socket instead, as the ws README's `isAlive` flag does (figures in benchmarks/README.md).
 *
 * The ws README patches `isAlive` onto each socket, where users see it (`Object.keys(ws)`, a
 * log's `util.inspect`, a `JSON.stringify`) and can delete it. Middleware is invisible, so this
 * slot is a private class field, stamped onto an object its class never constructed:
 *
 * ```js
 * class Stamp { constructor(target) { return target; } }
 * class RecordSlot extends Stamp { #record; constructor(target, r) { super(target); this.#record = r; } }
 * new RecordSlot(socket, record); // socket now has #record
 * ```
 *
 * A derived constructor's `this` is whatever its base constructor returned, and the derived
 * class adds its fields to that object: here, the socket. V8 keeps a private field as a property
 * keyed by a private symbol, which no user code can name: `Object.keys`,
 * `Object.getOwnPropertyNames`, `Object.getOwnPropertySymbols`, `Reflect.ownKeys`, `for...in`,
 * `JSON.stringify`, `util.inspect` (even with `showHidden`) and `structuredClone` skip it,
 * `delete` cannot name it, and `removeAllListeners()` does not touch it. Only code in this class
 * can read it (`#record in s` tells whether a socket has the slot). Stamping works on any object:
 * a client-side or server-side ws `WebSocket`, a stand-in, a Proxy (the field is on the proxy
 * itself, no trap runs), even a frozen object on Node 20-26. Should a later V8 refuse private
 * fields on non-extensible objects (a TC39 proposal), {@link setSocketRecord} says so and the
 * caller keeps the record elsewhere.
 *
 * Private fields cannot be deleted, so clearing the slot writes undefined: a socket keeps the
 * empty slot after its record is gone, and the next heartbeat on it reuses it. A socket has one
 * slot for every heartbeat (one private name, so every watched ws socket gets the same hidden
 * class, as with `isAlive`); the heartbeat keeps a second controller's records on the same
 * socket in a map of its own (heartbeat.ts).
 */

/** The base whose constructor returns the object to stamp, so the derived class's fields land on it. */
class Stamp {
  constructor(target: object) {
    // A constructor returning an object: `this` of the derived constructor becomes `target`.
    return target;
  }
}

/** See the module comment. */
class RecordSlot extends Stamp {
  #record: unknown;

  private constructor(target: object, record: unknown) {
    super(target);
    this.#record = record;
  }

  static get(target: unknown): unknown {
    // `in` throws on a primitive: a caller's `state(null)` answers undefined, as a map lookup did.
    return typeof target === 'object' && target !== null && #record in target ? target.#record : undefined;
  }

  static set(target: object, record: unknown): void {
    if (#record in target) target.#record = record;
    else new RecordSlot(target, record);
  }
}

/** The record in `socket`'s slot; undefined when it has none (never stamped, or cleared, or not an object). */
export function socketRecord<R>(socket: unknown): R | undefined {
  return RecordSlot.get(socket) as R | undefined;
}

/**
 * Puts `record` in `socket`'s slot (stamping the slot on first use), or clears it with undefined.
 *
 * @returns false when the object takes no private field (a future V8's rule for non-extensible
 *   objects); the slot is then untouched
 */
export function setSocketRecord(socket: object, record: unknown): boolean {
  try {
    RecordSlot.set(socket, record);
    return true;
  } catch (error) {
    if (error instanceof TypeError) return false;
    throw error;
  }
}
