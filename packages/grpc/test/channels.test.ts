import { describe, expect, it } from 'vitest';
import { channelListener } from '../../../tests/helpers/channel-listener.js';
import { ownBudget } from '@tickwheel/core/internal';
import { serverBudget } from '../src/call-budget.js';
import { deadlineChannel, publishDeadline, publishHandlerAbort } from '../src/channels.js';
import { GRPC_DEADLINE_CHANNEL, GRPC_HANDLER_ABORT_CHANNEL } from '../src/index.js';

describe('channels', () => {
  const listen = channelListener();

  it('names its channels tickwheel:grpc:*', () => {
    expect([GRPC_DEADLINE_CHANNEL, GRPC_HANDLER_ABORT_CHANNEL]).toEqual([
      'tickwheel:grpc:deadline',
      'tickwheel:grpc:handler-abort',
    ]);
  });

  describe('publishDeadline', () => {
    it('publishes side, path, limit, budget and elapsed time, and where the time went; a propagated limit is flagged', () => {
      const messages = listen(GRPC_DEADLINE_CHANNEL);
      const own = ownBudget('timeoutMs', 250, 251, 1);
      const inherited = serverBudget('propagated', 1_000, 1_000, 0);
      publishDeadline('client', '/shop.Cart/Get', 'method', 250, own, undefined);
      publishDeadline('server', '/shop.Cart/Get', 'propagated', 1_000, inherited, undefined);
      expect(messages).toEqual([
        {
          side: 'client',
          path: '/shop.Cart/Get',
          limit: 'method',
          budgetMs: 250,
          elapsedMs: 251,
          propagated: false,
          budget: own,
        },
        {
          side: 'server',
          path: '/shop.Cart/Get',
          limit: 'propagated',
          budgetMs: 1_000,
          elapsedMs: 1_000,
          propagated: true,
          budget: { ...inherited, source: 'grpc', inherited: true, limit: 'deadline' },
        },
      ]);
    });

    it('does nothing while nobody listens', () => {
      expect(deadlineChannel.hasSubscribers).toBe(false);
      expect(() =>
        publishDeadline('client', '/a/b', 'default', 1, ownBudget('timeoutMs', 1, 1, 0), undefined),
      ).not.toThrow();
    });
  });

  describe('publishHandlerAbort', () => {
    it('publishes the path, the reason and the time since the call arrived', () => {
      const messages = listen(GRPC_HANDLER_ABORT_CHANNEL);
      publishHandlerAbort('/shop.Cart/Get', 'client-cancelled', 12, undefined);
      expect(messages).toEqual([{ path: '/shop.Cart/Get', reason: 'client-cancelled', elapsedMs: 12 }]);
    });
  });
});
