/**
 * The defaults of watch() and the checks of its options, in the option kit's message shape.
 *
 * Every failure reads as core's option kit words it (`@tickwheel/ws: silenceMs must be a finite
 * number of ms > 0, got -5`); the kit itself cannot be imported here, since `@tickwheel/core/internal`
 * brings the wheel, diagnostics_channel and AsyncLocalStorage with it.
 */
import type { WatchableSocket, WatchOptions } from './types.js';

const PKG = '@tickwheel/ws';

/** The defaults, in one place. */
export const WATCH_DEFAULTS = Object.freeze({
  keepaliveMessage: '',
  /** The one standard code a page may send (the others are for the user agent or registered uses). */
  closeCode: 1000,
  closeReason: 'server silent',
} as const);

/** setTimeout's largest delay: a longer one overflows and fires at once in browsers and Node. */
export const MAX_SILENCE_MS = 2 ** 31 - 1;

/** RFC 6455 §5.5: a control frame's payload is at most 125 bytes, two of which hold the code. */
const MAX_CLOSE_REASON_BYTES = 123;

const KNOWN = ['silenceMs', 'keepaliveMessage', 'closeCode', 'closeReason'];

/** Options with every default applied and every value checked. */
export interface ResolvedWatchOptions {
  readonly silenceMs: number;
  readonly keepaliveMessage: string;
  readonly closeCode: number;
  readonly closeReason: string;
}

/**
 * Applies the defaults and checks everything, so that a bad option throws at `watch()`, not as a
 * wrong verdict later (or, for a close code the page may not send, a `close()` that throws then).
 *
 * @throws TypeError/RangeError naming the package, the option and the value
 */
export function resolveWatchOptions(options: WatchOptions): ResolvedWatchOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(message('options', 'must be an object with silenceMs', options));
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw new TypeError(`${PKG}: unknown option ${key}; known options: ${KNOWN.join(', ')}`);
  }
  const { silenceMs } = options;
  const ms = `must be a finite number of ms > 0 and <= ${MAX_SILENCE_MS}`;
  if (typeof silenceMs !== 'number') throw new TypeError(message('silenceMs', ms, silenceMs));
  if (!(silenceMs > 0 && silenceMs <= MAX_SILENCE_MS)) throw new RangeError(message('silenceMs', ms, silenceMs));

  const keepaliveMessage =
    options.keepaliveMessage === undefined ? WATCH_DEFAULTS.keepaliveMessage : options.keepaliveMessage;
  if (typeof keepaliveMessage !== 'string') {
    throw new TypeError(message('keepaliveMessage', 'must be a string', keepaliveMessage));
  }

  const closeCode = options.closeCode === undefined ? WATCH_DEFAULTS.closeCode : options.closeCode;
  const codes = 'must be 1000 or an integer in 3000-4999 (the close codes a page may send)';
  if (typeof closeCode !== 'number') throw new TypeError(message('closeCode', codes, closeCode));
  if (!(closeCode === 1000 || (Number.isInteger(closeCode) && closeCode >= 3000 && closeCode <= 4999))) {
    throw new RangeError(message('closeCode', codes, closeCode));
  }

  const closeReason = options.closeReason === undefined ? WATCH_DEFAULTS.closeReason : options.closeReason;
  if (typeof closeReason !== 'string') throw new TypeError(message('closeReason', 'must be a string', closeReason));
  const bytes = new TextEncoder().encode(closeReason).length;
  if (bytes > MAX_CLOSE_REASON_BYTES) {
    throw new RangeError(
      `${PKG}: closeReason must be at most ${MAX_CLOSE_REASON_BYTES} bytes of UTF-8, got ${bytes} bytes`,
    );
  }
  return { silenceMs, keepaliveMessage, closeCode, closeReason };
}

/** Throws unless `socket` has what {@link WatchableSocket} lists. */
export function requireSocket(socket: unknown): asserts socket is WatchableSocket {
  const s = socket as Partial<Record<keyof WatchableSocket, unknown>> | null;
  if (
    s === null ||
    typeof s !== 'object' ||
    typeof s.readyState !== 'number' ||
    typeof s.addEventListener !== 'function' ||
    typeof s.removeEventListener !== 'function' ||
    typeof s.close !== 'function'
  ) {
    throw new TypeError(
      message(
        'socket',
        'must be a WHATWG WebSocket (readyState, addEventListener, removeEventListener, close)',
        socket,
      ),
    );
  }
}

function message(path: string, what: string, value: unknown): string {
  return `${PKG}: ${path} ${what}, got ${describe(value)}`;
}

/** A value for an error message, as core's `describeValue` renders it, without its contents. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? `an object (${name})` : 'a plain object';
}
