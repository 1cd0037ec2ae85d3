import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach } from 'vitest';

/**
 * A `listen(name)` for one describe block: subscribes to a diagnostics channel and returns the
 * messages it receives; every subscription ends after each test.
 */
export function channelListener(): (name: string) => unknown[] {
  const stops: Array<() => void> = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });
  return (name) => {
    const messages: unknown[] = [];
    const listener = (message: unknown) => messages.push(message);
    diagnosticsChannel.subscribe(name, listener);
    stops.push(() => diagnosticsChannel.unsubscribe(name, listener));
    return messages;
  };
}
