import { Writable } from 'node:stream';
import { createLogger } from '../logging/logger';
import { RotationSchedule, runRotationTick, type RotationTickOutcome } from './certs/rotation';
import type { CertificateBundle } from './certs/self-signed';

const OUTCOME: RotationTickOutcome = {
  action: 'reused',
  injection: { status: 'unchanged', attempts: 1, webhooks: 1 },
};

function capturingLogger(): { logger: ReturnType<typeof createLogger>; events: string[] } {
  const events: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      events.push((JSON.parse(chunk.toString()) as { event: string }).event);
      done();
    },
  });
  return { logger: createLogger({ service: 'webhook', level: 'info', destination }), events };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RotationSchedule', () => {
  it('runs checks on the interval, one at a time, and keeps going after a failed one', async () => {
    const { logger, events } = capturingLogger();
    let running = 0;
    let overlapped = false;
    let calls = 0;
    const schedule = new RotationSchedule(
      10,
      async () => {
        calls += 1;
        running += 1;
        overlapped ||= running > 1;
        await wait(15);
        running -= 1;
        if (calls === 1) throw new Error('API server unreachable');
        return OUTCOME;
      },
      logger,
    );
    schedule.start();
    const manual = schedule.runNow(); // overlaps the first scheduled tick: must queue behind it
    await wait(120);
    await schedule.stop();
    const callsAtStop = calls;
    await wait(40);

    expect(await manual.catch((error: Error) => error.message)).toBe('API server unreachable');
    expect(overlapped).toBe(false);
    expect(callsAtStop).toBeGreaterThanOrEqual(3);
    expect(calls).toBe(callsAtStop);
    expect(events).toContain('rotation_check');
    await expect(schedule.runNow()).rejects.toThrow('stopped');
  });

  it('rejects intervals a timer cannot wait for', () => {
    const { logger } = capturingLogger();
    expect(() => new RotationSchedule(0, async () => OUTCOME, logger)).toThrow(RangeError);
    expect(() => new RotationSchedule(2 ** 31, async () => OUTCOME, logger)).toThrow(RangeError);
  });
});

describe('runRotationTick', () => {
  it('serves the settled bundle, then re-syncs its CA into the registration', async () => {
    const bundle: CertificateBundle = { caPem: 'CA', certPem: 'CERT', keyPem: 'KEY' };
    const steps: string[] = [];
    const outcome = await runRotationTick({
      ensure: async () => {
        steps.push('ensure');
        return { bundle, action: 'rotated' };
      },
      serve: (served) => steps.push(`serve ${served.certPem}`),
      injectCaBundle: async (caPem) => {
        steps.push(`inject ${caPem}`);
        return { status: 'injected', attempts: 1, webhooks: 2 };
      },
    });
    expect(steps).toEqual(['ensure', 'serve CERT', 'inject CA']);
    expect(outcome).toEqual({
      action: 'rotated',
      injection: { status: 'injected', attempts: 1, webhooks: 2 },
    });
  });
});
