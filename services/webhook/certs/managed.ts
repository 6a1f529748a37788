import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../logging/logger';
import { checkServingPair, pairIdentity, type ServingPair } from './certificate-check';
import { errorMessage } from '../../model/error-message';

// Managed mode (spec 5): an external certificate manager writes tls.crt / tls.key into a mounted
// Secret volume; the webhook only reads them. The kubelet updates such a volume by swapping a
// symlinked directory (`..data`), which a watch on the files themselves misses, so the parent
// directories are watched (fast path) and the files are also re-read on an interval (the path
// that always works, e.g. on file systems without change events). A pair that does not parse, whose
// key does not match, or that has expired is not served: the previous pair stays in use. This
// also covers the moment between the manager writing tls.crt and writing tls.key.

export interface CertificateTarget {
  /** Serves the pair; throws if the TLS stack rejects it. */
  setCertificate(pair: ServingPair): void;
}

export interface ManagedCertificateOptions {
  certFile: string;
  keyFile: string;
  target: CertificateTarget;
  logger: Logger;
  clock?: () => Date;
  pollIntervalMs?: number;
  /** Change events come in bursts (two files, temporary names): wait for the burst to end. */
  debounceMs?: number;
}

export type ReloadOutcome = 'loaded' | 'unchanged' | 'rejected' | 'unreadable';

export const DEFAULT_POLL_INTERVAL_MS = 10_000;
const DEFAULT_DEBOUNCE_MS = 100;

export class ManagedCertificateFiles {
  private servedIdentity: string | null = null;
  private rejectedIdentity: string | null = null;
  private lastReadError: string | null = null;
  private watchers: FSWatcher[] = [];
  private pollTimer: NodeJS.Timeout | null = null;
  private debounceTimer: NodeJS.Timeout | null = null;
  private reloading: Promise<ReloadOutcome> | null = null;

  constructor(private readonly options: ManagedCertificateOptions) {}

  hasCertificate(): boolean {
    return this.servedIdentity !== null;
  }

  /** Loads the files once and starts watching them. */
  async start(): Promise<ReloadOutcome> {
    const outcome = await this.reload();
    for (const directory of new Set([dirname(this.options.certFile), dirname(this.options.keyFile)])) {
      try {
        const watcher = watch(directory, () => this.scheduleReload());
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch (error) {
        this.options.logger.warn(
          { event: 'tls_files_watch_unavailable', directory, error: errorMessage(error) },
          'cannot watch the certificate directory; changes are picked up by polling instead',
        );
      }
    }
    const interval = this.options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.pollTimer = setInterval(() => void this.reload(), interval);
    return outcome;
  }

  stop(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    this.pollTimer = null;
    this.debounceTimer = null;
  }

  /** Reads both files and serves them if they changed and are usable; one reload at a time. */
  async reload(): Promise<ReloadOutcome> {
    if (this.reloading) return this.reloading;
    this.reloading = this.readAndApply().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  private scheduleReload(): void {
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = null;
      void this.reload();
    }, this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS);
  }

  private async readAndApply(): Promise<ReloadOutcome> {
    const { certFile, keyFile, logger } = this.options;
    let pair: ServingPair;
    try {
      const [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
      pair = { certPem, keyPem };
      this.lastReadError = null;
    } catch (error) {
      const message = errorMessage(error);
      // Log a given read failure once, not on every poll.
      if (message !== this.lastReadError) {
        logger.warn(
          {
            event: 'tls_files_unreadable',
            certFile,
            keyFile,
            error: message,
            serving: this.hasCertificate(),
          },
          'cannot read the certificate files; check that the certificate manager has issued the certificate and the Secret is mounted',
        );
      }
      this.lastReadError = message;
      return 'unreadable';
    }

    const identity = pairIdentity(pair);
    if (identity === this.servedIdentity) return 'unchanged';
    if (identity === this.rejectedIdentity) return 'rejected';
    const verdict = checkServingPair(pair, (this.options.clock ?? (() => new Date()))());
    let problem = verdict.usable ? null : verdict.reason;
    if (verdict.usable) {
      try {
        this.options.target.setCertificate(pair);
      } catch (error) {
        problem = `TLS rejected the pair: ${errorMessage(error)}`;
      }
    }
    if (problem !== null) {
      this.rejectedIdentity = identity;
      logger.warn(
        { event: 'tls_files_rejected', certFile, keyFile, problem, keptPrevious: this.hasCertificate() },
        'new certificate files are not usable; still serving the previous certificate. Check the Certificate resource and its issuer',
      );
      return 'rejected';
    }
    this.servedIdentity = identity;
    this.rejectedIdentity = null;
    logger.info(
      {
        event: 'tls_certificate_loaded',
        source: 'files',
        certFile,
        notAfter: verdict.usable ? verdict.notAfter : null,
      },
      'serving certificate loaded from files',
    );
    return 'loaded';
  }
}
