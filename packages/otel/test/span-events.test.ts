import { context, trace } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addTimeoutEvent, budgetAttributes, TIMEOUT_EVENT } from '../src/span-events.js';
import { Telemetry } from './helpers/telemetry.js';

describe('span-events', () => {
  let telemetry: Telemetry;
  beforeEach(() => {
    telemetry = new Telemetry();
  });
  afterEach(() => telemetry.shutdown());

  describe('addTimeoutEvent', () => {
    it("adds the event with the limit and the elapsed time to the request context's recording span", () => {
      telemetry.inSpan('call', (span) => {
        addTimeoutEvent(context.active(), { 'tickwheel.package': 'grpc' }, 250, 251, { 'tickwheel.attempt': 0 });
        span.end();
      });
      const [span] = telemetry.finishedSpans();
      expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
        [
          TIMEOUT_EVENT,
          {
            'tickwheel.package': 'grpc',
            'tickwheel.limit_ms': 250,
            'tickwheel.elapsed_ms': 251,
            'tickwheel.attempt': 0,
          },
        ],
      ]);
    });

    it('does nothing without a context, without a span in it, or when the span is not recording', () => {
      expect(() => addTimeoutEvent(undefined, {}, 1, 1, undefined)).not.toThrow();
      expect(() => addTimeoutEvent(context.active(), {}, 1, 1, undefined)).not.toThrow();
      const ended = telemetry.inSpan('ended', (span) => {
        span.end();
        addTimeoutEvent(context.active(), {}, 1, 1, undefined);
        return trace.getActiveSpan();
      });
      expect(ended?.isRecording()).toBe(false);
      expect(telemetry.finishedSpans()[0].events).toEqual([]);
    });
  });

  describe('budgetAttributes', () => {
    it("turns a timeout's budget into attributes, naming an inherited deadline's source", () => {
      expect(
        budgetAttributes({
          limit: 'deadline',
          inherited: true,
          source: 'header:grpc-timeout',
          budgetMs: 2000,
          spentBeforeMs: 1200,
          elapsedMs: 800,
          lateMs: 0.5,
        }),
      ).toEqual({
        'tickwheel.limit': 'deadline',
        'tickwheel.inherited': true,
        'tickwheel.source': 'header:grpc-timeout',
        'tickwheel.budget_ms': 2000,
        'tickwheel.spent_before_ms': 1200,
        'tickwheel.late_ms': 0.5,
      });
      expect(budgetAttributes(undefined)).toBeUndefined();
    });
  });
});
