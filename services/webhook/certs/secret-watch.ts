import { Watch, type CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../logging/logger';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff';
import { describeKubernetesError, remedyFor } from './kubernetes-errors';
import { bundleFromSecret, type StoredSecret, type TlsSecretLocation } from './secret-store';

// Every replica watches the TLS Secret so that a rotation written by any replica (or by a person
// deleting and recreating it) is served everywhere without a restart (DESIGN.md 7).
//
// A list-then-watch loop on the single Secret (fieldSelector metadata.name), not a client-node
// informer: the informer stops for good on most errors and hangs forever on a half-open
// connection (TOOLCHAIN.md). Here each watch asks the server to end it after `timeoutSeconds`,
// a client-side deadline slightly later cuts a connection that went silent, and every end (clean
// or not) leads to a fresh list, so no resourceVersion bookkeeping (410 Gone) is needed. Listing
// one Secret every few minutes costs nothing.

export interface SecretWatchOptions {
  kubeConfig: KubeConfig;
  coreApi: CoreV1Api;
  location: TlsSecretLocation;
  onSecret: (stored: StoredSecret) => void;
  /** The Secret was deleted (someone wants fresh material): self-signed mode recreates it. */
  onDeleted?: () => void;
  logger: Logger;
  /** Server-side watch duration; the client gives up 30 s after it. */
  timeoutSeconds?: number;
  restartBackoff?: BackoffPolicy;
}

export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
const CLIENT_DEADLINE_GRACE_MS = 30_000;
const DEFAULT_RESTART_BACKOFF: BackoffPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 60_000,
  factor: 2,
  maxAttempts: Number.POSITIVE_INFINITY,
  jitter: 0.2,
};

function storedSecret(secret: V1Secret): StoredSecret {
  return {
    bundle: bundleFromSecret(secret),
    resourceVersion: secret.metadata?.resourceVersion ?? '',
    secret,
  };
}

export class SecretWatcher {
  private readonly stopController = new AbortController();
  private currentWatch: AbortController | null = null;
  private loop: Promise<void> | null = null;

  constructor(private readonly options: SecretWatchOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.currentWatch?.abort();
    await this.loop;
  }

  private get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  private async run(): Promise<void> {
    const policy = this.options.restartBackoff ?? DEFAULT_RESTART_BACKOFF;
    let consecutiveFailures = 0;
    while (!this.stopping) {
      try {
        const resourceVersion = await this.list();
        await this.watchFrom(resourceVersion);
        consecutiveFailures = 0;
      } catch (error) {
        if (this.stopping) break;
        consecutiveFailures += 1;
        this.options.logger.warn(
          {
            event: 'tls_secret_watch_failed',
            secret: `${this.options.location.namespace}/${this.options.location.secretName}`,
            error: describeKubernetesError(error),
            failures: consecutiveFailures,
          },
          `watching the TLS Secret failed; restarting with backoff (the current certificate stays in use): ${remedyFor(error, 'secrets (list, watch)')}`,
        );
        await sleep(backoffDelay(policy, consecutiveFailures), this.stopController.signal);
      }
    }
  }

  private fieldSelector(): string {
    return `metadata.name=${this.options.location.secretName}`;
  }

  /** Lists the Secret, hands it over if present, and returns the list's resourceVersion. */
  private async list(): Promise<string> {
    const list = await this.options.coreApi.listNamespacedSecret({
      namespace: this.options.location.namespace,
      fieldSelector: this.fieldSelector(),
    });
    const secret = list.items.find((item) => item.metadata?.name === this.options.location.secretName);
    if (secret) this.options.onSecret(storedSecret(secret));
    return list.metadata?.resourceVersion ?? '';
  }

  /** Resolves when the watch ends cleanly (server timeout, our deadline, stop), rejects on a failure. */
  private async watchFrom(resourceVersion: string): Promise<void> {
    const timeoutSeconds = this.options.timeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    const secretName = `${this.options.location.namespace}/${this.options.location.secretName}`;
    let errorEvent: Error | null = null;
    let transportError: unknown = null;
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const watch = new Watch(this.options.kubeConfig);
    this.currentWatch = await watch.watch(
      `/api/v1/namespaces/${encodeURIComponent(this.options.location.namespace)}/secrets`,
      { fieldSelector: this.fieldSelector(), resourceVersion, timeoutSeconds, allowWatchBookmarks: true },
      (phase: string, object: unknown) => {
        if (phase === 'ADDED' || phase === 'MODIFIED') {
          this.options.onSecret(storedSecret(object as V1Secret));
        } else if (phase === 'DELETED') {
          this.options.logger.warn(
            { event: 'tls_secret_deleted', secret: secretName },
            'the TLS Secret was deleted; the current certificate stays in use until a new one is created',
          );
          this.options.onDeleted?.();
        } else if (phase === 'ERROR') {
          // Typically 410 Gone (resourceVersion too old): a fresh list fixes it.
          errorEvent = new Error(`watch ended with an error event: ${JSON.stringify(object)}`);
          this.currentWatch?.abort();
        }
      },
      (error: unknown) => {
        transportError = error ?? null;
        ended();
      },
    );
    if (this.stopping) this.currentWatch.abort();
    const deadline = setTimeout(
      () => this.currentWatch?.abort(),
      timeoutSeconds * 1000 + CLIENT_DEADLINE_GRACE_MS,
    );
    try {
      await done;
    } finally {
      clearTimeout(deadline);
      this.currentWatch = null;
    }
    if (this.stopping) return;
    if (errorEvent) throw errorEvent;
    // An abort that is not a stop is our own deadline: a clean end.
    if (transportError && !isAbortError(transportError)) throw transportError;
  }
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}
