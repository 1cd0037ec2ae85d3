import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';
import { parsePrometheusText, quantileBound, total } from '../src/metrics-endpoint.mjs';

describe('main', () => {
  it('counts every timeout on the Prometheus endpoint, with its package, phase and method', async () => {
    const lines = [];
    const { samples, text, url, summary } = await main({ print: (line) => lines.push(line) });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(text).toContain('# TYPE tickwheel_timeouts_total counter');
    expect(text).toContain('# UNIT tickwheel_timeout_elapsed s');

    // fetch: GET /stall timed out three times (two retries), POST /stall once, /stall-body once.
    expect(
      total(samples, 'tickwheel_timeouts_total', {
        tickwheel_package: 'fetch',
        tickwheel_phase: 'headers',
        http_request_method: 'GET',
      }),
    ).toBe(3);
    expect(
      total(samples, 'tickwheel_timeouts_total', {
        tickwheel_package: 'fetch',
        tickwheel_phase: 'headers',
        http_request_method: 'POST',
      }),
    ).toBe(1);
    expect(total(samples, 'tickwheel_timeouts_total', { tickwheel_package: 'fetch', tickwheel_phase: 'body' })).toBe(1);
    expect(
      total(samples, 'tickwheel_fetch_retries_total', { http_request_method: 'GET', server_address: '127.0.0.1' }),
    ).toBe(2);
    // Each headers timeout came 100 ms (plus at most a tick and the loop's delay) after its attempt began.
    const headersElapsed = { tickwheel_package: 'fetch', tickwheel_phase: 'headers', http_request_method: 'GET' };
    const sum = total(samples, 'tickwheel_timeout_elapsed_sum', headersElapsed);
    expect(sum).toBeGreaterThanOrEqual(0.3);
    expect(sum).toBeLessThan(0.3 + 3 * 0.1);
    expect(total(samples, 'tickwheel_timeout_elapsed_bucket', { ...headersElapsed, le: '0.075' })).toBe(0);

    // gRPC: the client's 150 ms method limit, and the server's 100 ms cap.
    expect(
      total(samples, 'tickwheel_timeouts_total', {
        tickwheel_package: 'grpc',
        tickwheel_side: 'client',
        tickwheel_phase: 'method',
        rpc_method: 'Wait',
        rpc_service: 'demo.Slow',
      }),
    ).toBe(1);
    expect(
      total(samples, 'tickwheel_timeouts_total', {
        tickwheel_package: 'grpc',
        tickwheel_side: 'server',
        tickwheel_phase: 'max',
        rpc_method: 'Capped',
      }),
    ).toBe(1);
    expect(
      total(samples, 'tickwheel_grpc_handler_aborts_total', { tickwheel_reason: 'deadline', rpc_method: 'Capped' }),
    ).toBe(1);

    // ws: the mute client, terminated after its unanswered ping.
    expect(
      total(samples, 'tickwheel_timeouts_total', {
        tickwheel_package: 'ws',
        tickwheel_phase: 'pong-timeout',
        tickwheel_side: 'server',
      }),
    ).toBe(1);
    expect(total(samples, 'tickwheel_timeout_elapsed_sum', { tickwheel_package: 'ws' })).toBeGreaterThanOrEqual(0.1);

    // core: the shared wheel woke for all of those, and fired their timers.
    expect(total(samples, 'tickwheel_wheel_lateness_count')).toBeGreaterThan(0);
    expect(total(samples, 'tickwheel_wheel_fired_total')).toBeGreaterThanOrEqual(7);
    expect(quantileBound(samples, 'tickwheel_wheel_lateness', 0.5)).toBeLessThanOrEqual(0.1);

    expect(summary).toMatch(/^\d+ timeouts counted and scraped from a Prometheus endpoint$/);
    expect(lines.some((line) => line.startsWith('timeouts: fetch body 1, fetch headers 4'))).toBe(true);
  });
});

describe('parsePrometheusText', () => {
  it('reads names, labels (with escapes) and values, and skips comments', () => {
    const text =
      '# HELP x help\n# TYPE x counter\nx_total{a="1",b="say \\"hi\\"\\n"} 3\ny 2.5\nz_bucket{le="+Inf"} 4\n';
    expect(parsePrometheusText(text)).toEqual([
      { name: 'x_total', labels: { a: '1', b: 'say "hi"\n' }, value: 3 },
      { name: 'y', labels: {}, value: 2.5 },
      { name: 'z_bucket', labels: { le: '+Inf' }, value: 4 },
    ]);
  });
});
