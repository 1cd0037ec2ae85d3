/**
 * The one check of "plain JSON data": a deep copy of a value that JSON round-trips unchanged, or an error naming the path.
 * Must not depend on: the TimerSet, the wheel or any adapter package (the option kit's describeValue only).
 *
 * Two packages store values as JSON and must read back what they were given: `TimerSet`
 * snapshots (core) and timer payloads (`@tickwheel/redis`). `JSON.stringify` silently drops
 * `undefined`, functions and symbol keys, turns `NaN` into `null`, Dates into strings and Maps
 * into `{}`, fills holes with `null`, calls getters and `toJSON`, and throws on BigInt and cycles.
 * So {@link copyJson} accepts exactly what survives unchanged, null, booleans, strings, finite
 * numbers, dense arrays without extra properties, and objects whose prototype is
 * `Object.prototype` or null with enumerable string-keyed data properties, and hands anything
 * else to the caller's `refuse` with its path (`payload.items[2].at`) and the reason, so each
 * caller words the error its own way around the same finding.
 */
import { describeValue } from './options-kit.js';

/** Throws for the part of a value at `path`; `why` reads after the path: `is undefined, which JSON drops`. */
export type JsonRefusal = (path: string, why: string) => never;

/**
 * Returns a deep copy of `value` that JSON round-trips to an equal value, or calls `refuse` with
 * the path (starting at `root`) of the first part that would not.
 *
 * @example
 * ```ts
 * copyJson({ at: new Date() }, 'payload', (path, why) => {
 *   throw new TypeError(`${path} ${why}`); // payload.at is a Date instance; only plain objects, ...
 * });
 * ```
 */
export function copyJson(value: unknown, root: string, refuse: JsonRefusal): unknown {
  return copy(value, root, refuse, new Set());
}

/** `.name` for an identifier, `["odd key"]` for anything else, as a reader would write the path. */
function member(path: string, name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

function copy(value: unknown, path: string, refuse: JsonRefusal, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      return refuse(path, `is ${value}, which JSON turns into null`);
    case 'undefined':
      return refuse(path, 'is undefined, which JSON drops');
    case 'bigint':
      return refuse(path, `is a bigint (${describeValue(value)}), which JSON cannot write; pass it as a string`);
    case 'function':
    case 'symbol':
      return refuse(path, `is a ${typeof value} (${describeValue(value)})`);
  }
  if (value === null) return null;
  const object = value as object;
  if (ancestors.has(object)) return refuse(path, 'refers back to itself (a cycle)');
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      if (Object.keys(object).length !== object.length) {
        return refuse(path, 'is an array with holes or extra properties, which JSON loses');
      }
      const out: unknown[] = new Array(object.length);
      for (let i = 0; i < object.length; i++) out[i] = copy(object[i], `${path}[${i}]`, refuse, ancestors);
      return out;
    }
    const proto: unknown = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
      const hint = object instanceof Date ? ' (pass date.toISOString() or date.getTime())' : '';
      return refuse(path, `is a ${name} instance; only plain objects, arrays and primitives survive JSON${hint}`);
    }
    if (Object.getOwnPropertySymbols(object).length > 0) return refuse(path, 'has symbol keys, which JSON drops');
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(object)) {
      const descriptor = Object.getOwnPropertyDescriptor(object, name)!;
      const childPath = member(path, name);
      if (descriptor.get !== undefined) return refuse(childPath, 'is a getter');
      // defineProperty, not assignment: an own "__proto__" key (JSON.parse makes those) must stay a key.
      Object.defineProperty(out, name, {
        value: copy(descriptor.value, childPath, refuse, ancestors),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    ancestors.delete(object);
  }
}
