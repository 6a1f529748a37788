import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../logging/logger';
import { checkBundle, rotatedCaBundle, type BundleExpectation } from './certificate-check';
import { httpStatusOf } from './kubernetes-errors';
import type { CertificateBundle } from './self-signed';

// The TLS Secret `<webhook-name>-tls` is the single source of truth shared by all replicas (spec 5,
// DESIGN.md 7). Concurrency is left to the API server: creation is a POST that only one replica can
// win (409 AlreadyExists for the others), rotation is a PUT carrying the resourceVersion that was
// read (409 Conflict when someone wrote in between). A loser always adopts the winner's content.

export interface TlsSecretLocation {
  namespace: string;
  secretName: string;
}

export interface StoredSecret {
  /** Null when the Secret lacks `tls.crt`, `tls.key` or `ca.crt`. */
  bundle: CertificateBundle | null;
  resourceVersion: string;
  secret: V1Secret;
}

const SECRET_KEYS = { ca: 'ca.crt', cert: 'tls.crt', key: 'tls.key' } as const;

const MANAGED_BY_LABELS = {
  'app.kubernetes.io/name': 'forewarn',
  'app.kubernetes.io/component': 'webhook',
  'app.kubernetes.io/managed-by': 'forewarn-webhook',
};

function decode(data: Record<string, string>, key: string): string | null {
  const value = data[key];
  return typeof value === 'string' && value !== '' ? Buffer.from(value, 'base64').toString('utf8') : null;
}

/** The bundle a Secret carries. A self-signed `tls.crt` with no `ca.crt` is its own CA. */
export function bundleFromSecret(secret: Pick<V1Secret, 'data'>): CertificateBundle | null {
  const data = secret.data ?? {};
  const certPem = decode(data, SECRET_KEYS.cert);
  const keyPem = decode(data, SECRET_KEYS.key);
  if (!certPem || !keyPem) return null;
  return { certPem, keyPem, caPem: decode(data, SECRET_KEYS.ca) ?? certPem };
}

export function secretData(bundle: CertificateBundle): Record<string, string> {
  const encode = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  return {
    [SECRET_KEYS.ca]: encode(bundle.caPem),
    [SECRET_KEYS.cert]: encode(bundle.certPem),
    [SECRET_KEYS.key]: encode(bundle.keyPem),
  };
}

export class TlsSecretStore {
  constructor(
    private readonly coreApi: CoreV1Api,
    readonly location: TlsSecretLocation,
  ) {}

  async read(): Promise<StoredSecret | null> {
    try {
      const secret = await this.coreApi.readNamespacedSecret({
        name: this.location.secretName,
        namespace: this.location.namespace,
      });
      return {
        bundle: bundleFromSecret(secret),
        resourceVersion: secret.metadata?.resourceVersion ?? '',
        secret,
      };
    } catch (error) {
      if (httpStatusOf(error) === 404) return null;
      throw error;
    }
  }

  /** POST; `exists` when another writer created it first. */
  async create(bundle: CertificateBundle): Promise<'created' | 'exists'> {
    try {
      await this.coreApi.createNamespacedSecret({
        namespace: this.location.namespace,
        body: {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: this.location.secretName,
            namespace: this.location.namespace,
            labels: MANAGED_BY_LABELS,
          },
          type: 'kubernetes.io/tls',
          data: secretData(bundle),
        },
      });
      return 'created';
    } catch (error) {
      if (httpStatusOf(error) === 409) return 'exists';
      throw error;
    }
  }

  /**
   * PUT with the resourceVersion that was read; `conflict` when the Secret changed since. Labels,
   * annotations and type of the existing Secret are kept (type is immutable; a deploy tool may
   * rely on its labels).
   */
  async replace(current: StoredSecret, bundle: CertificateBundle): Promise<'replaced' | 'conflict'> {
    try {
      await this.coreApi.replaceNamespacedSecret({
        name: this.location.secretName,
        namespace: this.location.namespace,
        body: {
          ...current.secret,
          metadata: { ...current.secret.metadata, resourceVersion: current.resourceVersion },
          data: { ...(current.secret.data ?? {}), ...secretData(bundle) },
        },
      });
      return 'replaced';
    } catch (error) {
      const status = httpStatusOf(error);
      // 404: deleted since we read it; the next round recreates it.
      if (status === 409 || status === 404) return 'conflict';
      throw error;
    }
  }
}

export type EnsureAction = 'reused' | 'created' | 'adopted' | 'rotated';

export interface EnsureOutcome {
  bundle: CertificateBundle;
  action: EnsureAction;
}

export interface EnsureOptions {
  store: TlsSecretStore;
  /** Evaluated each round, so the clock is read when the decision is made. */
  expectation: () => BundleExpectation;
  generate: (now: Date) => Promise<CertificateBundle>;
  logger: Logger;
  /**
   * Called with the new bundle before a rotation is written: the registration must trust the
   * new CA before any replica serves a certificate it signed.
   */
  beforeRotate?: (bundle: CertificateBundle) => Promise<void>;
  maxRounds?: number;
}

const DEFAULT_MAX_ROUNDS = 5;

/**
 * Makes the Secret hold a usable bundle and returns it: reuse a valid one (a deploy-time Secret
 * included), create one if absent, replace one that is invalid or close to expiry. Each lost race
 * leads to another round that reads what the winner wrote.
 */
export async function ensureServingBundle(options: EnsureOptions): Promise<EnsureOutcome> {
  const { store, logger } = options;
  const secret = `${store.location.namespace}/${store.location.secretName}`;
  const maxRounds = options.maxRounds ?? DEFAULT_MAX_ROUNDS;
  let lostRace = false;
  for (let round = 1; round <= maxRounds; round += 1) {
    const expectation = options.expectation();
    const stored = await store.read();
    if (!stored) {
      const bundle = await options.generate(expectation.now);
      if ((await store.create(bundle)) === 'created') {
        logger.info({ event: 'tls_secret_created', secret }, 'created the webhook TLS Secret');
        return { bundle, action: 'created' };
      }
      logger.info(
        { event: 'tls_secret_race_lost', secret },
        'another replica created the TLS Secret first; using it',
      );
      lostRace = true;
      continue;
    }

    let reason = 'Secret lacks tls.crt or tls.key';
    // Keep trusting the CA of a still servable certificate: other replicas serve it until they reload.
    let previousCa: string | null = null;
    if (stored.bundle) {
      const verdict = checkBundle(stored.bundle, expectation);
      if (verdict.status === 'valid')
        return { bundle: stored.bundle, action: lostRace ? 'adopted' : 'reused' };
      reason = verdict.reason;
      if (verdict.status === 'renew') previousCa = stored.bundle.caPem;
    }

    logger.info({ event: 'tls_secret_rotating', secret, reason }, 'replacing the webhook certificate');
    const fresh = await options.generate(expectation.now);
    const rotated: CertificateBundle = {
      ...fresh,
      caPem: rotatedCaBundle(fresh.caPem, previousCa, expectation.now),
    };
    await options.beforeRotate?.(rotated);
    if ((await store.replace(stored, rotated)) === 'replaced') {
      logger.info({ event: 'tls_secret_rotated', secret, reason }, 'rotated the webhook certificate');
      return { bundle: rotated, action: 'rotated' };
    }
    logger.info(
      { event: 'tls_secret_race_lost', secret },
      'the TLS Secret changed while rotating; reading it again',
    );
    lostRace = true;
  }
  throw new Error(`the TLS Secret ${secret} kept changing; no stable certificate after ${maxRounds} rounds`);
}
