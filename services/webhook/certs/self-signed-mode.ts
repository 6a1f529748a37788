import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../logging/logger';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff';
import { DEFAULT_INJECTION_BACKOFF, injectCaBundle, type InjectionOutcome } from './ca-injector';
import {
  checkServingPair,
  RENEW_BEFORE_MS,
  type BundleExpectation,
  type ServingPair,
} from './certificate-check';
import { describeKubernetesError, remedyFor } from './kubernetes-errors';
import { RotationSchedule, runRotationTick, type RotationTickOutcome } from './rotation';
import { ensureServingBundle, TlsSecretStore, type EnsureOutcome, type StoredSecret } from './secret-store';
import { SecretWatcher } from './secret-watch';
import { generateSelfSignedBundle, subjectAltNames, type CertificateBundle } from './self-signed';
import { errorMessage } from '../../model/error-message';

// Self-signed mode put together (spec 5): settle the Secret, serve it, inject the CA bundle in the
// background, watch the Secret for rotations by other replicas, and check for rotation on an interval.

export interface ServingTarget {
  setCertificate(pair: ServingPair): void;
  isServing(pair: ServingPair): boolean;
}

export interface SelfSignedModeOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  secretName: string;
  webhookName: string;
  serviceName: string;
  extraSans: readonly string[];
  rotationCheckIntervalMs: number;
  target: ServingTarget;
  logger: Logger;
  renewBeforeMs?: number;
  clock?: () => Date;
  injectionBackoff?: BackoffPolicy;
  /** Retries of the first Secret settlement (API server unreachable, RBAC not applied yet). */
  startupBackoff?: BackoffPolicy;
  watchTimeoutSeconds?: number;
  watchRestartBackoff?: BackoffPolicy;
  generate?: (request: Parameters<typeof generateSelfSignedBundle>[0]) => Promise<CertificateBundle>;
  /**
   * Wait between trusting a new CA in the registration and serving a certificate it signed, so the
   * API server's copy of the registration has caught up. Default 5 s, once per rotation.
   */
  caPropagationDelayMs?: number;
}

export const DEFAULT_CA_PROPAGATION_DELAY_MS = 5_000;

const DEFAULT_STARTUP_BACKOFF: BackoffPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 15_000,
  factor: 2,
  maxAttempts: 8,
  jitter: 0.2,
};

type Injector = (caPem: string, backoff?: BackoffPolicy) => Promise<InjectionOutcome>;

export class SelfSignedCertificates {
  private constructor(
    /** The first CA injection, running in the background; resolves with its outcome, never rejects. */
    readonly initialInjection: Promise<InjectionOutcome>,
    private readonly stopController: AbortController,
    private readonly watcher: SecretWatcher,
    private readonly schedule: RotationSchedule,
  ) {}

  /** Resolves once a certificate is served; rejects when the Secret cannot be settled after retries. */
  static async start(options: SelfSignedModeOptions): Promise<SelfSignedCertificates> {
    const coreApi = options.kubeConfig.makeApiClient(CoreV1Api);
    const store = new TlsSecretStore(coreApi, {
      namespace: options.namespace,
      secretName: options.secretName,
    });
    const clock = options.clock ?? (() => new Date());
    const generate = options.generate ?? generateSelfSignedBundle;
    const requiredSans = subjectAltNames(options);
    const expectation = (): BundleExpectation => ({
      now: clock(),
      requiredSans,
      renewBeforeMs: options.renewBeforeMs ?? RENEW_BEFORE_MS,
    });

    const stopController = new AbortController();
    const admissionApi = options.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const inject: Injector = (caPem, backoff = options.injectionBackoff ?? DEFAULT_INJECTION_BACKOFF) =>
      injectCaBundle({
        admissionApi,
        webhookName: options.webhookName,
        caPem,
        logger: options.logger,
        backoff,
        signal: stopController.signal,
      });
    const ensure = (): Promise<EnsureOutcome> =>
      ensureServingBundle({
        store,
        expectation,
        logger: options.logger,
        generate: (now) => generate({ ...options, now }),
        // One quick try: trust the new CA before it is served; the tick re-syncs with retries after.
        beforeRotate: async (bundle) => {
          await inject(bundle.caPem, { ...DEFAULT_INJECTION_BACKOFF, maxAttempts: 1 });
          await new Promise((resolve) =>
            setTimeout(resolve, options.caPropagationDelayMs ?? DEFAULT_CA_PROPAGATION_DELAY_MS),
          );
        },
      });

    const first = await settleWithRetries(
      ensure,
      options.startupBackoff ?? DEFAULT_STARTUP_BACKOFF,
      options.logger,
    );
    const serve = (bundle: CertificateBundle): void => serveBundle(options, bundle, clock);
    serve(first.bundle);
    options.logger.info(
      { event: 'tls_secret_settled', action: first.action },
      'self-signed certificate ready',
    );

    const schedule = new RotationSchedule(
      options.rotationCheckIntervalMs,
      () => runRotationTick({ ensure, serve, injectCaBundle: (caPem) => inject(caPem) }),
      options.logger,
    );
    const watcher = new SecretWatcher({
      kubeConfig: options.kubeConfig,
      coreApi,
      location: store.location,
      logger: options.logger,
      timeoutSeconds: options.watchTimeoutSeconds,
      restartBackoff: options.watchRestartBackoff,
      onSecret: (stored: StoredSecret) => {
        if (stored.bundle) serve(stored.bundle);
      },
      // Deleting the Secret is the documented way to start over: recreate it now, not at the next
      // scheduled check. Replicas race as at first start; create-if-absent settles it.
      onDeleted: () => {
        schedule.runNow().catch((error: unknown) => {
          options.logger.warn(
            { event: 'rotation_check_failed', error: errorMessage(error) },
            'could not recreate the deleted TLS Secret; the next certificate check retries. Check API server access to the Secret',
          );
        });
      },
    });
    const initialInjection = inject(first.bundle.caPem);
    watcher.start();
    schedule.start();
    return new SelfSignedCertificates(initialInjection, stopController, watcher, schedule);
  }

  /** Runs the periodic check now: rotate if needed, re-sync the CA bundle. */
  checkNow(): Promise<RotationTickOutcome> {
    return this.schedule.runNow();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    await Promise.all([this.schedule.stop(), this.watcher.stop(), this.initialInjection]);
  }
}

async function settleWithRetries(
  ensure: () => Promise<EnsureOutcome>,
  policy: BackoffPolicy,
  logger: Logger,
): Promise<EnsureOutcome> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ensure();
    } catch (error) {
      const remedy = remedyFor(error, 'secrets (get, create, update) in the webhook namespace');
      logger.warn(
        {
          event: 'tls_secret_unavailable',
          attempt,
          maxAttempts: policy.maxAttempts,
          error: describeKubernetesError(error),
        },
        `cannot settle the webhook TLS Secret: ${remedy}`,
      );
      if (attempt >= policy.maxAttempts) throw error;
      await sleep(backoffDelay(policy, attempt));
    }
  }
}

/** Serves a bundle from the Secret unless it is already served or unusable (then the old one stays). */
function serveBundle(options: SelfSignedModeOptions, bundle: CertificateBundle, clock: () => Date): void {
  if (options.target.isServing(bundle)) return;
  const verdict = checkServingPair(bundle, clock());
  if (!verdict.usable) {
    options.logger.warn(
      { event: 'tls_secret_rejected', problem: verdict.reason },
      'the TLS Secret holds an unusable certificate; still serving the previous one until the next certificate check replaces it',
    );
    return;
  }
  try {
    options.target.setCertificate(bundle);
  } catch (error) {
    options.logger.warn(
      { event: 'tls_secret_rejected', problem: errorMessage(error) },
      'TLS rejected the certificate from the Secret; still serving the previous one',
    );
    return;
  }
  options.logger.info(
    {
      event: 'tls_certificate_loaded',
      source: 'secret',
      notAfter: verdict.notAfter,
      serial: verdict.leaf.serialNumber,
    },
    'serving certificate loaded',
  );
}
