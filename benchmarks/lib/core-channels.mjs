/**
 * The core suite's diagnostics-channel scenarios (issue 18): what a wake-up pays for its channel
 * with nobody listening, and with the OpenTelemetry bridge on. Takes the number of rounds.
 */
import { noop } from './harness.mjs';
import { bridgeOn, CHANNEL_CANDIDATES, compiledOut } from './channel-candidates.mjs';
import { alternate, printScenario, scenario } from './harness.mjs';

// ---------------------------------------------------------------------------------------------
// 8. Diagnostics channels: what a wake-up pays for its channel with nobody listening, and with
// the OpenTelemetry bridge on. A ManualClock wheel is driven 1 ms at a time, so every step is one
// wake-up (one publish site) and the figure is CPU per timer, schedule and fire included.

const CHANNEL_TIMERS = 200_000;

/** One sample: CPU ns per timer for `timers` timers due `perWake` to a millisecond, fired step by step. */
function wakeSample(core, timers, perWake) {
  const clock = new core.ManualClock(0);
  const wheel = new core.TimingWheel({ clock });
  const steps = Math.ceil(timers / perWake);
  const start = process.cpuUsage();
  for (let i = 0; i < timers; i++) wheel.schedule(1 + Math.floor(i / perWake), noop);
  for (let step = 0; step < steps; step++) clock.advance(1);
  const used = process.cpuUsage(start);
  wheel.close();
  return ((used.user + used.system) * 1000) / timers;
}

export async function channelScenarios(repeats) {
  // Each candidate on a copy of its own (see compiledOut's `strip`).
  const copies = [compiledOut([]), compiledOut([], false), compiledOut([], false)];
  try {
    const [stripped, built, bridged] = await Promise.all(copies.map((copy) => copy.load('core')));
    const out = [];
    for (const [id, perWake, what] of [
      ['channels-unused-sparse', 1, 'one timer per wake-up (a wake-up per timer: the most channel reads per timer)'],
      ['channels-unused-dense', 1_000, '1,000 timers per wake-up'],
    ]) {
      const candidates = {
        [CHANNEL_CANDIDATES.compiledOut]: () => wakeSample(stripped, CHANNEL_TIMERS, perWake),
        [CHANNEL_CANDIDATES.noSubscriber]: () => wakeSample(built, CHANNEL_TIMERS, perWake),
        [CHANNEL_CANDIDATES.bridgeOn]: async () => {
          // Subscribed only during its own samples: the other candidates run with nobody listening.
          const bridge = bridgeOn();
          try {
            return wakeSample(bridged, CHANNEL_TIMERS, perWake);
          } finally {
            await bridge.disable();
          }
        },
      };
      for (const sample of Object.values(candidates)) await sample(); // warm-up
      const results = await alternate(candidates, Math.max(repeats, 7));
      const note = `${CHANNEL_TIMERS.toLocaleString('en-US')} timers on a ManualClock wheel, ${what}, fired by advance(1) steps; CPU ns per timer (schedule and fire). "${CHANNEL_CANDIDATES.compiledOut}" is the same build with every hasSubscribers read replaced by false (lib/channel-candidates.mjs); "${CHANNEL_CANDIDATES.bridgeOn}" adds instrumentTickwheel() recording every wake-up (lateness, timers fired, callback time) into the SDK's MeterProvider.`;
      const unused = scenario({
        id,
        title: `Diagnostics channels with no subscriber: ${what}`,
        unit: 'ns/timer',
        higherIsBetter: false,
        subject: CHANNEL_CANDIDATES.noSubscriber,
        baseline: CHANNEL_CANDIDATES.compiledOut,
        results,
        target: { ratio: 0.99 },
        note: `${note} Target: within 1% of the compiled-out build (ratio >= 0.99).`,
      });
      const bridge = scenario({
        id: id.replace('unused', 'bridge'),
        title: `OpenTelemetry bridge on: ${what} (informational)`,
        unit: 'ns/timer',
        higherIsBetter: false,
        subject: CHANNEL_CANDIDATES.bridgeOn,
        baseline: CHANNEL_CANDIDATES.noSubscriber,
        results,
        note: `The samples of ${id}.`,
      });
      printScenario(unused);
      printScenario(bridge);
      out.push(unused, bridge);
    }
    return out;
  } finally {
    for (const copy of copies) copy.remove();
  }
}
