/**
 * The Server-Sent Events wire format: an event, a comment and a retry field as the lines an EventSource parses.
 *
 * One field per line, `name: value` (the parser drops one space after the colon, so a value that
 * starts with a space keeps it), a blank line ending the event. A line break inside `data` starts
 * another `data:` line, which the parser joins back with `\n`; in `event` or `id` it would end the
 * field early and let the rest pose as fields of its own, so those are refused.
 */
import { kit } from './options.js';

/** Any of the three line breaks the EventSource parser accepts. */
const LINE_BREAK = /\r\n|\r|\n/;

/** The heartbeat: an empty comment and a blank line (no event is dispatched). */
export const HEARTBEAT = ':\n\n';

/** One event as it goes on the wire. @throws TypeError/RangeError for a bad value (see the module comment) */
export function eventText(data: string, event: string | undefined, id: string | undefined): string {
  if (typeof data !== 'string') throw kit.typeError('data', 'must be a string', data);
  let head = '';
  if (id !== undefined) {
    fieldValue(id, 'id');
    if (id.includes('\0')) throw kit.rangeError('id', 'must not contain NUL', id);
    head = `id: ${id}\n`;
  }
  if (event !== undefined) head += `event: ${fieldValue(event, 'event')}\n`;
  if (!LINE_BREAK.test(data)) return `${head}data: ${data}\n\n`;
  return `${head}data: ${data.split(LINE_BREAK).join('\ndata: ')}\n\n`;
}

/** A comment, one `:` line per line of `text`. */
export function commentText(text: string): string {
  if (typeof text !== 'string') throw kit.typeError('text', 'must be a string', text);
  return `: ${text.split(LINE_BREAK).join('\n: ')}\n\n`;
}

/** The field that sets the client's reconnection delay. */
export function retryText(retryMs: number): string {
  return `retry: ${retryMs}\n\n`;
}

function fieldValue(value: unknown, name: string): string {
  if (typeof value !== 'string') throw kit.typeError(name, 'must be a string', value);
  if (LINE_BREAK.test(value)) throw kit.rangeError(name, 'must not contain a line break', value);
  return value;
}
