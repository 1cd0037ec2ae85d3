import { TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/timeout-error.js';
import { withTimeouts } from '../../src/with-timeouts.js';
import { FETCH_IMPLEMENTATIONS } from '../helpers/fetch-implementations.js';
import { since } from '../helpers/http-server.js';
import { rejectionOf } from '../helpers/scripted-fetch.js';
import { useUploadServer } from '../helpers/upload-server.js';

/*
 * The upload phase against a real node:http server on 127.0.0.1 (issue 36): headersMs waits for
 * the end of the upload, uploadIdleMs catches a server that stops reading, and the body's own
 * source producing slowly counts for neither. Every fetch implementation: Node's global fetch and
 * undici.fetch 6, 7 and 8. System clock; limits of hundreds of ms and bounds generous for a
 * loaded 2-core machine.
 */
const MIB = 1024 * 1024;
/** More than the socket buffers of both ends take in on loopback (up to ~10 MiB on Linux's defaults), so a server that stops reading stalls it. */
const STALL_BYTES = 24 * MIB;

/** A ReadableStream of `total` bytes in `chunk`-byte chunks, waiting `pauseMs` before each chunk after the first. */
function pausingStream(total: number, chunk: number, pauseMs: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent > 0 && pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      if (sent >= total) {
        controller.close();
        return;
      }
      const size = Math.min(chunk, total - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size).fill(0x61));
    },
  });
}

/** The bodies the upload phase covers, each `bytes` long (about); FormData of the implementation's own class (fetch sends a foreign one as a string). */
function bodies(bytes: number, FormDataClass: typeof FormData): Array<[string, () => RequestInit]> {
  const text = 'a'.repeat(bytes);
  return [
    ['Buffer', () => ({ body: Buffer.alloc(bytes, 0x61) })],
    ['string', () => ({ body: text })],
    ['Blob', () => ({ body: new Blob([text]) })],
    [
      'FormData',
      () => {
        const form = new FormDataClass();
        form.append('file', new Blob([text]), 'a.txt');
        return { body: form };
      },
    ],
    ['URLSearchParams', () => ({ body: new URLSearchParams({ a: text }) })],
    ['ReadableStream', () => ({ body: pausingStream(bytes, 64 * 1024, 0), duplex: 'half' })],
  ];
}

describe.each(FETCH_IMPLEMENTATIONS.map((impl) => [impl.name, impl] as const))(
  'the upload phase of withTimeouts(%s)',
  (_name, impl) => {
    const { server, base } = useUploadServer();
    let wheel: TimingWheel;

    afterEach(() => {
      expect(wheel.size).toBe(0);
      wheel.close();
    });

    it('lets a 12 MiB POST read slowly by the server succeed with headersMs: 400 (issue 36; undici#645)', async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(impl.fetch, { headersMs: 400, totalMs: 60_000, wheel });
      const start = performance.now();
      const res = await timed(`${base()}/slow?kib=64&every=10`, { method: 'POST', body: Buffer.alloc(12 * MIB, 1) });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(String(12 * MIB));
      // The upload outlasted headersMs several times over: a headers limit from the start would have fired.
      expect(since(start)).toBeGreaterThan(1_200);
    }, 60_000);

    it('still limits the wait for the answer after the upload with headersMs', async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(impl.fetch, { headersMs: 300, totalMs: 30_000, wheel });
      // /stall reads the whole 64 KiB body, then never answers.
      const error = await rejectionOf(
        timed(`${base()}/stall?kib=64`, { method: 'POST', body: Buffer.alloc(64 * 1024, 1) }),
      );
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error).toMatchObject({ phase: 'headers', timeoutMs: 300 });
    }, 30_000);

    // got, test/timeout.ts, 'send timeout': a server that stops reading the body ends the request in its send phase.
    it.each(bodies(STALL_BYTES, impl.FormData))(
      'fails an upload of a %s body with phase upload when the server stops reading',
      async (_kind, makeBody) => {
        wheel = new TimingWheel();
        // headersMs (which also covers the connection) far longer: uploadIdleMs must be the limit that fires.
        const timed = withTimeouts(impl.fetch, { uploadIdleMs: 300, headersMs: 10_000, totalMs: 30_000, wheel });
        const start = performance.now();
        const error = await rejectionOf(timed(`${base()}/stall?kib=256`, { method: 'POST', ...makeBody() }));
        expect(error).toBeInstanceOf(TimeoutError);
        expect(error).toMatchObject({ phase: 'upload', timeoutMs: 300, method: 'POST' });
        expect(since(start)).toBeLessThan(15_000);
      },
      30_000,
    );

    it.each(bodies(2 * MIB, impl.FormData))(
      'sends a %s body in full with uploadIdleMs and headersMs',
      async (_kind, makeBody) => {
        wheel = new TimingWheel();
        const timed = withTimeouts(impl.fetch, { uploadIdleMs: 2_000, headersMs: 2_000, totalMs: 30_000, wheel });
        const res = await timed(`${base()}/read`, { method: 'POST', ...makeBody() });
        expect(res.status).toBe(200);
        expect(Number(await res.text())).toBeGreaterThanOrEqual(2 * MIB);
      },
      30_000,
    );

    // undici, test/request-timeout2.js, 'request timeout with slow readable body': headersTimeout does not run while
    // the body is still being produced. got, test/timeout.ts, 'send timeout (keepalive)' with its slowDataStream fails
    // in got's send phase; here the time the caller's stream takes counts for neither uploadIdleMs nor headersMs.
    it("counts the time the caller's own stream takes to produce a chunk for neither uploadIdleMs nor headersMs", async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(impl.fetch, { uploadIdleMs: 150, headersMs: 150, totalMs: 30_000, wheel });
      const init = { method: 'POST', body: pausingStream(4 * 1024, 1024, 400), duplex: 'half' } as RequestInit;
      const res = await timed(`${base()}/read`, init);
      expect(await res.text()).toBe(String(4 * 1024));
    }, 30_000);

    it('reports a 413 the server sends before reading the body, as bare fetch does', async () => {
      wheel = new TimingWheel();
      // The answer comes while the upload is under way; limits a busy machine cannot reach by mistake.
      const timed = withTimeouts(impl.fetch, { uploadIdleMs: 10_000, headersMs: 10_000, totalMs: 60_000, wheel });
      const body = (): RequestInit => ({ method: 'POST', body: Buffer.alloc(2 * MIB, 1) });
      const bare = await settle(impl.fetch(`${base()}/early`, body()));
      const wrapped = await settle(timed(`${base()}/early`, body()));
      expect(wrapped).toEqual(bare);
      expect(wrapped).toMatchObject({ status: 413 });
    }, 30_000);

    it('retries an upload that stalled only for a method in retry.methods', async () => {
      wheel = new TimingWheel();
      const options = { uploadIdleMs: 200, totalMs: 30_000, wheel };
      const body = (): RequestInit => ({ method: 'POST', body: Buffer.alloc(STALL_BYTES, 1) });
      let before = server.requests;
      const plain = withTimeouts(impl.fetch, { ...options, retry: { limit: 1, backoffMs: 0 } });
      expect(await rejectionOf(plain(`${base()}/stall?kib=256`, body()))).toMatchObject({ phase: 'upload' });
      expect(server.requests - before).toBe(1);
      before = server.requests;
      const posts = withTimeouts(impl.fetch, { ...options, retry: { limit: 1, backoffMs: 0, methods: ['POST'] } });
      expect(await rejectionOf(posts(`${base()}/stall?kib=256`, body()))).toMatchObject({ phase: 'upload' });
      expect(server.requests - before).toBe(2);
    }, 30_000);

    it('never retries a ReadableStream body, which cannot be sent twice', async () => {
      wheel = new TimingWheel();
      const before = server.requests;
      const timed = withTimeouts(impl.fetch, {
        uploadIdleMs: 200,
        totalMs: 30_000,
        wheel,
        retry: { limit: 2, backoffMs: 0, methods: ['POST'] },
      });
      const init = { method: 'POST', body: pausingStream(STALL_BYTES, 64 * 1024, 0), duplex: 'half' } as RequestInit;
      expect(await rejectionOf(timed(`${base()}/stall?kib=256`, init))).toMatchObject({ phase: 'upload' });
      expect(server.requests - before).toBe(1);
    }, 30_000);
  },
);

/** What a fetch settled with: the response's status and text, or the error's name. */
async function settle(pending: Promise<Response>): Promise<{ status: number; text: string } | { error: string }> {
  try {
    const res = await pending;
    return { status: res.status, text: await res.text() };
  } catch (error) {
    return { error: (error as Error).name };
  }
}
