/**
 * EventScanner: finds the progress events of an event stream (SSE, NDJSON) in the body chunks the caller gets, without copying them.
 *
 * The scanner reads each chunk in place and keeps only its position in the current line and
 * event between chunks, so the bytes reach the caller unchanged and its memory does not grow
 * with the stream. With the default notion of progress it keeps no text at all: an SSE event
 * counts when the WHATWG EventSource parser would dispatch it (a blank line ends an event that
 * has a `data` field), an NDJSON line when it holds anything but whitespace. Only a custom
 * `isProgress` makes it decode events, and then it holds at most the event being read (its
 * lines as views of the chunks they arrived in, decoded once the line ends).
 *
 * SSE follows the parser of the HTML standard (§9.2.6, "Interpreting an event stream"): one
 * leading byte order mark is skipped, lines end with CRLF, LF or CR (a CR at the end of a chunk
 * may be followed by the LF of the next), a line starting with `:` is a comment, the field name
 * ends at the first `:` and one space after it is dropped, `id` values holding NULL are ignored,
 * and the event type is `message` unless an `event` field set it. NDJSON and JSON Lines split
 * at LF (a CR before it is part of the line end).
 */
import { Buffer } from 'node:buffer';
import type { StreamEvent } from './types.js';

/** What kind of stream a response body is, by its content type. */
export const NOT_A_STREAM = 0;
/** `text/event-stream`: Server-Sent Events. */
export const SSE = 1;
/** `application/x-ndjson` or `application/jsonl`: one JSON value per line. */
export const LINES = 2;
export type StreamKind = typeof NOT_A_STREAM | typeof SSE | typeof LINES;

/**
 * The kind of stream a `content-type` value announces: the essence (before any `;` parameter),
 * trimmed, in any case.
 */
export function streamKindOf(contentType: string | null | undefined): StreamKind {
  if (typeof contentType !== 'string') return NOT_A_STREAM;
  const semicolon = contentType.indexOf(';');
  const essence = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  if (essence === 'text/event-stream') return SSE;
  if (essence === 'application/x-ndjson' || essence === 'application/jsonl') return LINES;
  return NOT_A_STREAM;
}

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;
const TAB = 9;
/** "data", the one field name the default notion of progress looks for. */
const DATA = [100, 97, 116, 97] as const;

/*
 * Where a line stands as far as the default scan has read it: the first bytes of an SSE line
 * decide what it is, so the scan only looks at a line until it knows.
 */
/** Nothing of the line read yet. */
const LINE_START = 0;
/** 1 to 4: that many bytes of "data" matched so far. */
/** The line is a `data` field (its name, then `:` or the line's end). */
const DATA_FIELD = 5;
/** The line is something else (comment, another field); skip to its end. */
const OTHER = 6;

const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/*
 * Node's Buffer searches, called on any Uint8Array: they scan a chunk natively (memchr), so the
 * scanner never loops over a chunk's bytes in JavaScript.
 */
const bufferMethods = Buffer.prototype as Buffer;
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with .call on each chunk
const indexOf = bufferMethods.indexOf as unknown as (
  this: Uint8Array,
  value: number | Uint8Array,
  from?: number,
) => number;
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with .call on each chunk
const lastIndexOf = bufferMethods.lastIndexOf as unknown as (
  this: Uint8Array,
  value: number | Uint8Array,
  from?: number,
) => number;
/** Two LFs: a line end and the blank line after it. */
const BLANK = Buffer.from('\n\n');
/** A line end and the field name "data" at the start of the next line. */
const DATA_LINE = Buffer.from('\ndata');

/**
 * Finds the progress events of one response body, chunk by chunk. {@link scan} says whether a
 * chunk completed at least one; the timer only needs to know that.
 */
export class EventScanner {
  /** Bytes of the leading byte order mark matched so far (3: done with it, matched or not). */
  private bom = 0;
  /** The previous chunk ended with CR: an LF at the start of this one ends no line. */
  private afterCR = false;
  /** The default scan: where the current line stands (LINE_START, 1-4, DATA_FIELD, OTHER). */
  private line = LINE_START;
  /** The current SSE event has a data field / the current NDJSON line has content. */
  private filled = false;
  /** With a custom isProgress: the current line's pieces (views of the chunks), decoded when it ends. */
  private pieces: Uint8Array[] = [];
  private eventType = '';
  private data = '';
  private lastId = '';

  /**
   * @param kind - {@link SSE} or {@link LINES}
   * @param isProgress - the caller's test of an event; undefined: the default (data-carrying SSE events, non-blank lines)
   */
  constructor(
    private readonly kind: typeof SSE | typeof LINES,
    private readonly isProgress: ((event: StreamEvent) => boolean) | undefined,
  ) {}

  /**
   * Reads `chunk` (not kept, not changed).
   * @returns true when at least one progress event ended in it
   * @throws what a custom isProgress throws
   */
  scan(chunk: Uint8Array): boolean {
    let start = 0;
    const length = chunk.length;
    if (this.bom < 3) {
      start = this.skipBom(chunk);
      if (start === length) return false;
    }
    if (this.afterCR) {
      this.afterCR = false;
      if (chunk[start] === LF) start++;
    }
    return this.isProgress === undefined ? this.scanDefault(chunk, start) : this.scanEvents(chunk, start);
  }

  /** Skips the part of a leading byte order mark (EF BB BF) at the start of the stream. */
  private skipBom(chunk: Uint8Array): number {
    const BOM = [0xef, 0xbb, 0xbf];
    let i = 0;
    while (this.bom < 3 && i < chunk.length) {
      if (chunk[i] !== BOM[this.bom]) {
        // Not a BOM after all: the bytes matched so far belong to the line (only SSE cares, and
        // 0xEF starts no field name the scan looks for).
        if (this.bom > 0) this.line = OTHER;
        this.bom = 3;
        return i;
      }
      this.bom++;
      i++;
    }
    return i;
  }

  /** The default notion of progress: no text kept, only where the current line and event stand. */
  private scanDefault(chunk: Uint8Array, from: number): boolean {
    if (this.kind === SSE) {
      return indexOf.call(chunk, CR, from) < 0 ? this.scanSse(chunk, from) : this.scanSseBytes(chunk, from);
    }
    return this.scanLines(chunk, from);
  }

  /**
   * An SSE chunk whose lines all end with LF: a handful of native searches (memchr-fast) per
   * chunk instead of a look at every line, since only two things matter: whether an event with a
   * data field ends in it, and where the last event and line stand at its end.
   */
  private scanSse(chunk: Uint8Array, from: number): boolean {
    const length = chunk.length;
    const firstLF = indexOf.call(chunk, LF, from);
    if (this.line < DATA_FIELD)
      this.line = dataPrefix(chunk, from, firstLF < 0 ? length : firstLF, this.line, firstLF >= 0);
    if (firstLF < 0) return false;
    // The line in progress ends at firstLF.
    let progress = false;
    let filled = this.filled;
    if (this.line === LINE_START) {
      progress = filled;
      filled = false;
    } else if (this.line === DATA_FIELD) {
      filled = true;
    }
    const lastLF = lastIndexOf.call(chunk, LF);
    // After firstLF every line starts after an LF; a blank line is an LF right after another.
    const lastBlank = lastLF > firstLF ? lastIndexOf.call(chunk, BLANK, lastLF - 1) + 1 : 0;
    if (lastBlank > firstLF) {
      // Events end in this chunk: the first of them had data if the one in progress did, or if a
      // data line starts anywhere before the last blank line (its event ends by then).
      if (!progress) progress = filled || dataLine(chunk, firstLF, lastBlank) >= 0;
      filled = dataLine(chunk, lastBlank, lastLF) >= 0;
    } else if (!filled) {
      filled = dataLine(chunk, firstLF, lastLF) >= 0;
    }
    this.filled = filled;
    this.line = dataPrefix(chunk, lastLF + 1, length, LINE_START, false);
    return progress;
  }

  /** An SSE chunk with a CR in it: every line end looked at, byte by byte. */
  private scanSseBytes(chunk: Uint8Array, from: number): boolean {
    const length = chunk.length;
    let progress = false;
    let line = this.line;
    let filled = this.filled;
    let i = from;
    while (i < length) {
      let end = i;
      while (end < length && chunk[end] !== LF && chunk[end] !== CR) end++;
      if (line < DATA_FIELD) line = dataPrefix(chunk, i, end, line, end < length);
      if (end === length) break;
      if (line === LINE_START) {
        // A blank line: the event ends, and the parser dispatches it when it has data.
        if (filled) progress = true;
        filled = false;
      } else if (line === DATA_FIELD) {
        filled = true;
      }
      line = LINE_START;
      i = end + 1;
      if (chunk[end] === CR) {
        if (i === length) this.afterCR = true;
        else if (chunk[i] === LF) i++;
      }
    }
    this.line = line;
    this.filled = filled;
    return progress;
  }

  /** NDJSON: a progress event is a line with something but whitespace in it. */
  private scanLines(chunk: Uint8Array, from: number): boolean {
    const length = chunk.length;
    const firstLF = indexOf.call(chunk, LF, from);
    if (!this.filled) this.filled = hasContent(chunk, from, firstLF < 0 ? length : firstLF);
    if (firstLF < 0) return false;
    let progress = this.filled;
    const lastLF = lastIndexOf.call(chunk, LF);
    if (!progress && lastLF > firstLF) progress = hasContent(chunk, firstLF + 1, lastLF, true);
    this.filled = hasContent(chunk, lastLF + 1, length);
    return progress;
  }

  /** A custom isProgress: each complete line decoded, SSE events assembled as the parser dispatches them. */
  private scanEvents(chunk: Uint8Array, from: number): boolean {
    const length = chunk.length;
    let progress = false;
    let i = from;
    while (i < length) {
      let end = i;
      if (this.kind === SSE) {
        while (end < length && chunk[end] !== LF && chunk[end] !== CR) end++;
      } else {
        end = chunk.indexOf(LF, i);
        if (end < 0) end = length;
      }
      if (end === length) {
        if (end > i) this.pieces.push(chunk.subarray(i, end));
        break;
      }
      if (this.lineEnded(this.takeLine(chunk, i, end))) progress = true;
      i = end + 1;
      if (chunk[end] === CR) {
        if (i === length) this.afterCR = true;
        else if (chunk[i] === LF) i++;
      }
    }
    return progress;
  }

  /** The text of the line that ends at `end` of `chunk`, with what earlier chunks held of it. */
  private takeLine(chunk: Uint8Array, start: number, end: number): string {
    const pieces = this.pieces;
    if (pieces.length === 0) return decoder.decode(chunk.subarray(start, end));
    pieces.push(chunk.subarray(start, end));
    let size = 0;
    for (const piece of pieces) size += piece.length;
    const whole = new Uint8Array(size);
    let at = 0;
    for (const piece of pieces) {
      whole.set(piece, at);
      at += piece.length;
    }
    this.pieces = [];
    return decoder.decode(whole);
  }

  /** A complete line: true when it completes a progress event. */
  private lineEnded(text: string): boolean {
    if (this.kind === LINES) {
      if (text.endsWith('\r')) text = text.slice(0, -1);
      return text.trim() !== '' && this.isProgress!({ data: text });
    }
    if (text === '') {
      const data = this.data;
      const type = this.eventType;
      this.data = '';
      this.eventType = '';
      // The parser dispatches only events with a data field; their data loses its last LF.
      if (data === '') return false;
      return this.isProgress!({ event: type === '' ? 'message' : type, data: data.slice(0, -1), id: this.lastId });
    }
    if (text.charCodeAt(0) === COLON) return false;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (field === 'data') this.data += `${value}\n`;
    else if (field === 'event') this.eventType = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    return false;
  }
}

/**
 * Advances the match of an SSE line's start against the field name `data` over `chunk[from, to)`,
 * from `state` (bytes matched so far); `ended`: the line ends at `to`.
 * @returns DATA_FIELD, OTHER, LINE_START (nothing read: a blank line so far) or 1-4 (still matching)
 */
function dataPrefix(chunk: Uint8Array, from: number, to: number, state: number, ended: boolean): number {
  for (let i = from; i < to; i++) {
    if (state === 4) return chunk[i] === COLON ? DATA_FIELD : OTHER;
    if (chunk[i] !== DATA[state]) return OTHER;
    state++;
  }
  return state === 4 && ended ? DATA_FIELD : state;
}

/**
 * Where a `data` field line starts (its LF before it) after the LF at `from` and ends by the LF
 * at `to`, or -1: "data" after an LF, then `:` or the line's end.
 */
function dataLine(chunk: Uint8Array, from: number, to: number): number {
  for (let at = indexOf.call(chunk, DATA_LINE, from); at >= 0 && at < to; at = indexOf.call(chunk, DATA_LINE, at + 1)) {
    const next = chunk[at + 5];
    if (next === COLON || next === LF) return at;
  }
  return -1;
}

/**
 * Whether `chunk[from, to)` holds a byte other than space, tab or CR (a blank NDJSON line has
 * none); with `lineEnds`, LFs are blank too.
 */
function hasContent(chunk: Uint8Array, from: number, to: number, lineEnds = false): boolean {
  for (let i = from; i < to; i++) {
    const byte = chunk[i];
    if (byte !== SPACE && byte !== TAB && byte !== CR && (!lineEnds || byte !== LF)) return true;
  }
  return false;
}
