import type { Logger } from '../../logging/logger';
import type { InjectionOutcome } from './ca-injector';
import type { EnsureAction, EnsureOutcome } from './secret-store';
import type { CertificateBundle } from './self-signed';
import { errorMessage } from '../../model/error-message';

// The periodic certificate check of self-signed mode (spec 5, 8): every interval (24 h by
// default) make sure the Secret holds a certificate with more than 30 days left, rotating it
// otherwise, and write the CA bundle into the registration again: someone may have re-applied the
// registration without it, and re-syncing is cheap when nothing changed (a read, no write).

export interface RotationTickSteps {
  /** ensureServingBundle with the rotation settings (renewal threshold, beforeRotate). */
  ensure: () => Promise<EnsureOutcome>;
  injectCaBundle: (caPem: string) => Promise<InjectionOutcome>;
  /** Serve the bundle here at once; other replicas pick it up through their Secret watch. */
  serve: (bundle: CertificateBundle) => void;
}

export interface RotationTickOutcome {
  action: EnsureAction;
  injection: InjectionOutcome;
}

export async function runRotationTick(steps: RotationTickSteps): Promise<RotationTickOutcome> {
  const ensured = await steps.ensure();
  steps.serve(ensured.bundle);
  const injection = await steps.injectCaBundle(ensured.bundle.caPem);
  return { action: ensured.action, injection };
}

// setTimeout cannot wait longer than 2^31-1 ms (24.8 days); longer values fire at once.
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Runs `tick` every `intervalMs`, never two at once; a failed tick is logged and the next one runs. */
export class RotationSchedule {
  private timer: NodeJS.Timeout | null = null;
  /** Ticks run one after another: each new one is chained behind the last. */
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly tick: () => Promise<RotationTickOutcome>,
    private readonly logger: Logger,
  ) {
    if (intervalMs <= 0 || intervalMs > MAX_TIMER_MS) {
      throw new RangeError(`rotation check interval must be between 1 ms and ${MAX_TIMER_MS} ms`);
    }
  }

  start(): void {
    this.stopped = false;
    this.scheduleNext();
  }

  /** Runs a check now (between scheduled ones), after one already running. */
  runNow(): Promise<RotationTickOutcome> {
    if (this.stopped) return Promise.reject(new Error('the certificate checks are stopped'));
    const outcome = this.queue.then(() => this.tick());
    this.queue = outcome.catch(() => undefined);
    return outcome;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.queue;
  }

  private scheduleNext(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runNow()
        .then((outcome) => {
          this.logger.info(
            { event: 'rotation_check', action: outcome.action, injection: outcome.injection.status },
            'certificate check done',
          );
        })
        .catch((error: unknown) => {
          this.logger.warn(
            { event: 'rotation_check_failed', error: errorMessage(error) },
            'certificate check failed; the current certificate stays in use and the check runs again at the next interval. Check API server access to the TLS Secret',
          );
        })
        .finally(() => this.scheduleNext());
    }, this.intervalMs);
  }
}
