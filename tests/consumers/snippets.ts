/**
 * What a user writes against each published entry, once per package: imports plus an async body
 * (TypeScript; the plain-JS projects get it with the types stripped). Knows nothing of the workspace.
 *
 * Each body talks to real peers on loopback (a gRPC server, a ws server, a node:http server, a
 * redis-server on a unix socket) and returns what it saw; `expected` is that result.
 */
export interface Snippet {
  /** The package under test, also the snippet's file name. */
  entry: string;
  /** Named imports per module, in the order they are written. */
  imports: Record<string, string[]>;
  /** The body of `async function main()`, in TypeScript. */
  body: string;
  expected: unknown;
}

export const snippets: Snippet[] = [
  {
    entry: '@tickwheel/core',
    imports: { '@tickwheel/core': ['ManualClock', 'TimingWheel', 'currentDeadline', 'sharedWheel', 'withDeadline'] },
    body: `
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  let firedAt = -1;
  const handle = wheel.schedule(5, () => {
    firedAt = clock.now();
  });
  clock.advance(10);
  const inside = await withDeadline(1_000, async () => currentDeadline() !== undefined);
  return { firedAt, state: handle.state, inside, shared: sharedWheel() === sharedWheel() };`,
    expected: { firedAt: 5, state: 'fired', inside: true, shared: true },
  },
  {
    entry: '@tickwheel/grpc',
    imports: {
      '@grpc/grpc-js': ['Client', 'Server', 'ServerCredentials', 'credentials', 'status'],
      '@tickwheel/grpc': ['deadlineInterceptor', 'serverDeadlineInterceptor'],
    },
    body: `
  const same = (value: Buffer): Buffer => value;
  const method = (name: string) => ({
    path: '/demo.Echo/' + name,
    requestStream: false as const,
    responseStream: false as const,
    requestSerialize: same,
    requestDeserialize: same,
    responseSerialize: same,
    responseDeserialize: same,
  });
  const server = new Server({ interceptors: [serverDeadlineInterceptor({ defaultTimeoutMs: 5_000 })] });
  server.addService(
    { Echo: method('Echo'), Slow: method('Slow') },
    {
      Echo: (call: { request: Buffer }, callback: (error: null, value: Buffer) => void) => callback(null, call.request),
      Slow: (call: { request: Buffer }, callback: (error: null, value: Buffer) => void) => {
        setTimeout(() => callback(null, call.request), 2_000).unref();
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  const client = new Client('127.0.0.1:' + port, credentials.createInsecure(), {
    interceptors: [deadlineInterceptor({ timeoutMs: 5_000, overrides: { '/demo.Echo/Slow': 50 } })],
  });
  const call = (name: string) =>
    new Promise<string>((resolve) =>
      client.makeUnaryRequest(method(name).path, same, same, Buffer.from('hi'), (error, value) =>
        resolve(error ? 'code ' + error.code : String(value)),
      ),
    );
  const echo = await call('Echo');
  const slow = await call('Slow');
  client.close();
  server.forceShutdown();
  return { echo, slow, deadlineExceeded: 'code ' + status.DEADLINE_EXCEEDED };`,
    expected: { echo: 'hi', slow: 'code 4', deadlineExceeded: 'code 4' },
  },
  {
    entry: '@tickwheel/http',
    imports: {
      'node:http': ['createServer'],
      '@tickwheel/core': ['currentDeadline'],
      '@tickwheel/http': ['serverTimeouts'],
    },
    body: `
  const server = createServer((req, res) => {
    if (req.url === '/slow') return; // never answers: the deadline does
    res.end(String(currentDeadline()?.remaining() ?? 'none'));
  });
  const timeouts = serverTimeouts(server, { defaultTimeoutMs: 300, headersMs: 5_000, keepAliveMs: 5_000 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const fast = await fetch('http://127.0.0.1:' + port + '/fast', { headers: { 'connect-timeout-ms': '200' } });
  const left = Number(await fast.text());
  const slow = await fetch('http://127.0.0.1:' + port + '/slow');
  await slow.text();
  await timeouts.close({ graceMs: 1_000 });
  return { fast: left > 0 && left <= 200, slow: slow.status };`,
    expected: { fast: true, slow: 503 },
  },
  {
    entry: '@tickwheel/ws',
    imports: { 'node:events': ['once'], ws: ['WebSocket', 'WebSocketServer'], '@tickwheel/ws': ['heartbeat'] },
    body: `
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  const beat = heartbeat(wss, { pingIntervalMs: 1_000, pongTimeoutMs: 500 });
  const address = wss.address();
  const client = new WebSocket('ws://127.0.0.1:' + (typeof address === 'object' && address !== null ? address.port : 0));
  await once(client, 'open');
  const watched = beat.stats().connections;
  client.close();
  await once(client, 'close');
  beat.stop();
  wss.close();
  return { watched, state: typeof beat.state };`,
    expected: { watched: 1, state: 'function' },
  },
  {
    entry: '@tickwheel/ws/browser',
    imports: {
      'node:events': ['once'],
      ws: ['WebSocket', 'WebSocketServer'],
      '@tickwheel/ws': ['heartbeat'],
      '@tickwheel/ws/browser': ['watch'],
    },
    body: `
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  const beat = heartbeat(wss, { keepaliveMs: 50 });
  const address = wss.address();
  const client = new WebSocket('ws://127.0.0.1:' + (typeof address === 'object' && address !== null ? address.port : 0));
  await once(client, 'open');
  const watcher = watch(client, { silenceMs: 300 });
  let keepalives = 0;
  client.addEventListener('message', (event) => {
    if (watcher.isKeepalive(event)) keepalives++;
  });
  await new Promise((resolve) => setTimeout(resolve, 400));
  const aliveWithKeepalives = !watcher.isStopped;
  beat.stop();
  const silentMs = await new Promise<number>((resolve) => watcher.addEventListener('dead', (event) => resolve(event.silentMs)));
  const readyState = client.readyState;
  client.terminate();
  wss.close();
  return { aliveWithKeepalives, keepalives: keepalives >= 3, silentMs: silentMs >= 300, readyState };`,
    expected: { aliveWithKeepalives: true, keepalives: true, silentMs: true, readyState: 2 },
  },
  {
    entry: '@tickwheel/fetch',
    imports: {
      'node:events': ['once'],
      'node:http': ['createServer'],
      undici: ['fetch as undiciFetch'],
      '@tickwheel/fetch': ['TimeoutError', 'withTimeouts'],
    },
    body: `
  const server = createServer((request, response) => {
    if (request.url !== '/never') response.end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const base = 'http://127.0.0.1:' + (typeof address === 'object' && address !== null ? address.port : 0);
  // A second for headers: a process's first fetch loads undici, slow on a loaded machine.
  const timedFetch = withTimeouts(fetch, { headersMs: 1_000, totalMs: 5_000 });
  try {
    const text = await (await timedFetch(base + '/')).text();
    let phase = 'none';
    try {
      await timedFetch(base + '/never');
    } catch (error) {
      if (error instanceof TimeoutError) phase = error.phase;
    }
    const viaUndici = await (await withTimeouts(undiciFetch, { totalMs: 5_000 })(base + '/')).text();
    return { text, phase, viaUndici };
  } finally {
    // Closed whatever happened, so that a failure ends the process rather than leaving it listening.
    server.closeAllConnections();
    server.close();
  }`,
    expected: { text: 'ok', phase: 'headers', viaUndici: 'ok' },
  },
  {
    entry: '@tickwheel/redis',
    imports: { ioredis: ['Redis'], '@tickwheel/redis': ['RedisTimers'] },
    body: `
  const redis = new Redis({ path: process.env.TICKWHEEL_REDIS_SOCKET ?? '', maxRetriesPerRequest: 1 });
  const timers = new RedisTimers<{ player: number }>({ redis, namespace: 'consumer-' + process.pid });
  const fired = await new Promise<{ id: string; player: number | undefined }>((resolve, reject) => {
    timers.start(({ id, payload }) => resolve({ id, player: payload?.player })).catch(reject);
    timers.schedule('buff:42', 20, { player: 42 }).catch(reject);
  });
  await timers.stop();
  await redis.quit();
  return fired;`,
    expected: { id: 'buff:42', player: 42 },
  },
  {
    entry: '@tickwheel/otel',
    imports: {
      '@opentelemetry/sdk-metrics': [
        'AggregationTemporality',
        'InMemoryMetricExporter',
        'MeterProvider',
        'PeriodicExportingMetricReader',
      ],
      '@tickwheel/core': ['sharedWheel'],
      '@tickwheel/otel': ['METRICS', 'instrumentTickwheel'],
    },
    body: `
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const instrumentation = instrumentTickwheel({ meterProvider });
  await new Promise<void>((resolve) => sharedWheel().schedule(5, () => resolve()));
  await reader.forceFlush();
  const fired = exporter
    .getMetrics()
    .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics))
    .find((metric) => metric.descriptor.name === METRICS.wheelFired);
  instrumentation.disable();
  await meterProvider.shutdown();
  return { fired: fired?.dataPoints[0]?.value, enabled: instrumentation.enabled };`,
    expected: { fired: 1, enabled: false },
  },
];
