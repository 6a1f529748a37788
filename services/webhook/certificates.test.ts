import { X509Certificate, createPrivateKey } from 'node:crypto';
import forge from 'node-forge';
import {
  checkBundle,
  checkServingPair,
  RENEW_BEFORE_MS,
  rotatedCaBundle,
  splitPemCertificates,
  type BundleExpectation,
} from './certs/certificate-check';
import { caBundlePatch } from './certs/ca-injector';
import { backoffDelay } from './certs/backoff';
import { serviceDnsNames } from '../model/kubernetes';
import { bundleFromSecret, secretData } from './certs/secret-store';
import { generateSelfSignedBundle, subjectAltNames, type CertificateBundle } from './certs/self-signed';

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date('2026-11-22T12:00:00.000Z');
const SERVICE = { serviceName: 'forewarn-webhook', namespace: 'forewarn-system', extraSans: ['127.0.0.1'] };
const REQUIRED = subjectAltNames(SERVICE);

function expectation(now: Date, requiredSans: readonly string[] = REQUIRED): BundleExpectation {
  return { now, requiredSans, renewBeforeMs: RENEW_BEFORE_MS };
}

// Two generations are enough for every test here (keygen dominates the run time).
let bundle: CertificateBundle;
let other: CertificateBundle;
beforeAll(async () => {
  [bundle, other] = await Promise.all([
    generateSelfSignedBundle({ ...SERVICE, now: NOW }),
    generateSelfSignedBundle({ ...SERVICE, extraSans: [], now: new Date(NOW.getTime() - 200 * DAY) }),
  ]);
});

describe('generateSelfSignedBundle', () => {
  it('issues a server certificate for the four service names plus IP SANs, signed by a CA', () => {
    const ca = new X509Certificate(bundle.caPem);
    const server = new X509Certificate(bundle.certPem);
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.subjectAltName).toBe(
      'DNS:forewarn-webhook, DNS:forewarn-webhook.forewarn-system, DNS:forewarn-webhook.forewarn-system.svc, ' +
        'DNS:forewarn-webhook.forewarn-system.svc.cluster.local, IP Address:127.0.0.1',
    );
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.checkPrivateKey(createPrivateKey(bundle.keyPem))).toBe(true);
    expect(server.keyUsage).toContain('1.3.6.1.5.5.7.3.1'); // serverAuth
  });

  it('uses RSA-2048 keys, SHA-256 signatures and one year of validity from the given time', () => {
    const server = new X509Certificate(bundle.certPem);
    expect(server.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(new X509Certificate(bundle.caPem).publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(new Date(server.validTo).getTime()).toBe(NOW.getTime() + 365 * DAY);
    expect(new Date(server.validFrom).getTime()).toBeLessThanOrEqual(NOW.getTime());
    for (const pem of [bundle.certPem, bundle.caPem]) {
      expect(forge.pki.certificateFromPem(pem).siginfo.algorithmOid).toBe(
        forge.pki.oids.sha256WithRSAEncryption,
      );
    }
    expect(bundle.keyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
    expect(bundle.certPem).not.toContain('\r');
  });

  it('names each CA uniquely per generation', () => {
    expect(new X509Certificate(bundle.caPem).subject).not.toBe(new X509Certificate(other.caPem).subject);
  });

  it('lists the service DNS names in spec order', () => {
    expect(serviceDnsNames('svc', 'ns')).toEqual(['svc', 'svc.ns', 'svc.ns.svc', 'svc.ns.svc.cluster.local']);
  });
});

describe('checkServingPair', () => {
  it('accepts a matching, unexpired pair', () => {
    expect(checkServingPair(bundle, NOW)).toMatchObject({
      usable: true,
      notAfter: new Date(NOW.getTime() + 365 * DAY),
    });
  });

  it.each([
    [
      'a key of another pair',
      () => ({ certPem: bundle.certPem, keyPem: other.keyPem }),
      'private key does not match the certificate',
    ],
    [
      'garbage certificate',
      () => ({ certPem: 'not a certificate', keyPem: bundle.keyPem }),
      'no PEM certificate found',
    ],
    ['garbage key', () => ({ certPem: bundle.certPem, keyPem: 'nope' }), 'private key does not parse'],
  ])('rejects %s', (_label, pair, reason) => {
    expect(checkServingPair(pair(), NOW)).toEqual({ usable: false, reason: expect.stringContaining(reason) });
  });

  it('rejects an expired pair', () => {
    expect(checkServingPair(bundle, new Date(NOW.getTime() + 366 * DAY))).toEqual({
      usable: false,
      reason: expect.stringContaining('certificate expired'),
    });
  });
});

/** Re-signs the bundle's CA and leaf with forge's default (PrintableString) name encoding. */
function withPrintableStringNames(source: CertificateBundle, caKeyPem: string): CertificateBundle {
  const caKey = forge.pki.privateKeyFromPem(caKeyPem);
  const ca = forge.pki.certificateFromPem(source.caPem);
  const name = [{ name: 'commonName', value: 'forewarn-webhook-ca@1700000000' }];
  ca.publicKey = forge.pki.setRsaPublicKey(caKey.n, caKey.e);
  ca.setSubject(name);
  ca.setIssuer(name);
  ca.sign(caKey, forge.md.sha256.create());
  const leaf = forge.pki.certificateFromPem(source.certPem);
  leaf.setIssuer(name);
  leaf.sign(caKey, forge.md.sha256.create());
  return {
    caPem: forge.pki.certificateToPem(ca),
    certPem: forge.pki.certificateToPem(leaf),
    keyPem: source.keyPem,
  };
}

describe('certificate name encoding', () => {
  it('encodes every name as UTF8String, which Go (kube-apiserver) accepts with any character', () => {
    for (const pem of [bundle.caPem, bundle.certPem]) {
      const certificate = forge.pki.certificateFromPem(pem);
      for (const attribute of [...certificate.subject.attributes, ...certificate.issuer.attributes])
        expect({ name: attribute.name, tag: attribute.valueTagClass }).toEqual({
          name: attribute.name,
          tag: forge.asn1.Type.UTF8,
        });
    }
  });

  it('replaces a stored bundle whose CA name is an invalid PrintableString (written by older versions)', () => {
    const caKey = forge.pki.rsa.generateKeyPair({ bits: 1024, e: 0x10001 });
    const legacy = withPrintableStringNames(bundle, forge.pki.privateKeyToPem(caKey.privateKey));
    expect(checkBundle(legacy, expectation(NOW))).toMatchObject({
      status: 'invalid',
      reason: expect.stringContaining('not a valid PrintableString'),
    });
  });
});

describe('checkBundle', () => {
  it('keeps a bundle with more than 30 days left', () => {
    expect(checkBundle(bundle, expectation(new Date(NOW.getTime() + 334 * DAY)))).toEqual({
      status: 'valid',
      notAfter: new Date(NOW.getTime() + 365 * DAY),
    });
  });

  it('asks for renewal with 29 days left', () => {
    expect(checkBundle(bundle, expectation(new Date(NOW.getTime() + 336 * DAY)))).toEqual({
      status: 'renew',
      notAfter: new Date(NOW.getTime() + 365 * DAY),
      reason: expect.stringContaining('expires in 29 days'),
    });
  });

  it('asks for renewal when a required name is missing', () => {
    expect(checkBundle(bundle, expectation(NOW, [...REQUIRED, '10.1.2.3']))).toMatchObject({
      status: 'renew',
      reason: 'certificate lacks the names 10.1.2.3',
    });
  });

  it('rejects a certificate not signed by a CA in ca.crt', () => {
    expect(checkBundle({ ...bundle, caPem: other.caPem }, expectation(NOW))).toEqual({
      status: 'invalid',
      reason: 'tls.crt is not signed by a CA in ca.crt',
    });
  });

  it('accepts the issuing CA anywhere in a multi-CA ca.crt', () => {
    expect(checkBundle({ ...bundle, caPem: `${other.caPem}${bundle.caPem}` }, expectation(NOW)).status).toBe(
      'valid',
    );
  });

  it('rejects an expired bundle', () => {
    expect(checkBundle(bundle, expectation(new Date(NOW.getTime() + 400 * DAY))).status).toBe('invalid');
  });
});

describe('rotatedCaBundle', () => {
  it('puts the new CA first and keeps unexpired previous CAs', () => {
    const combined = rotatedCaBundle(bundle.caPem, other.caPem, NOW);
    expect(splitPemCertificates(combined)).toEqual([bundle.caPem.trim(), other.caPem.trim()]);
  });

  it('drops previous CAs that have expired', () => {
    // `other` was issued 200 days before NOW: expired 166 days after it.
    const combined = rotatedCaBundle(bundle.caPem, other.caPem, new Date(NOW.getTime() + 170 * DAY));
    expect(splitPemCertificates(combined)).toEqual([bundle.caPem.trim()]);
  });

  it('has no duplicates and no previous CAs when there were none', () => {
    expect(splitPemCertificates(rotatedCaBundle(bundle.caPem, bundle.caPem, NOW))).toHaveLength(1);
    expect(rotatedCaBundle(bundle.caPem, null, NOW)).toBe(`${bundle.caPem.trim()}\n`);
  });
});

describe('Secret encoding', () => {
  it('round-trips a bundle through Secret data', () => {
    expect(bundleFromSecret({ data: secretData(bundle) })).toEqual(bundle);
    expect(Object.keys(secretData(bundle)).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
  });

  it('treats a Secret without ca.crt as self-signed and one without a key as empty', () => {
    const data = secretData(bundle);
    expect(
      bundleFromSecret({ data: { 'tls.crt': data['tls.crt'], 'tls.key': data['tls.key'] } })?.caPem,
    ).toBe(bundle.certPem);
    expect(bundleFromSecret({ data: { 'tls.crt': data['tls.crt'] } })).toBeNull();
    expect(bundleFromSecret({})).toBeNull();
  });
});

describe('caBundlePatch', () => {
  const configuration = {
    metadata: { name: 'forewarn-webhook', resourceVersion: '42' },
    webhooks: [
      {
        name: 'a.forewarn.io',
        clientConfig: { caBundle: 'b2xk' },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
      {
        name: 'b.forewarn.io',
        clientConfig: { caBundle: 'bmV3' },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
      { name: 'c.forewarn.io', clientConfig: {}, sideEffects: 'None', admissionReviewVersions: ['v1'] },
    ],
  };

  it('tests the resourceVersion and sets only the entries that differ', () => {
    expect(caBundlePatch(configuration, 'bmV3')).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: 'bmV3' },
      { op: 'add', path: '/webhooks/2/clientConfig/caBundle', value: 'bmV3' },
    ]);
  });

  it('is null when every entry already carries the bundle', () => {
    const current = {
      ...configuration,
      webhooks: configuration.webhooks.map((webhook) => ({ ...webhook, clientConfig: { caBundle: 'bmV3' } })),
    };
    expect(caBundlePatch(current, 'bmV3')).toBeNull();
  });
});

describe('backoffDelay', () => {
  const policy = { initialDelayMs: 1000, maxDelayMs: 30_000, factor: 2, maxAttempts: 10 };

  it('doubles from the initial delay up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 9].map((failed) => backoffDelay(policy, failed))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
  });

  it('spreads by the jitter fraction', () => {
    const jittered = { ...policy, jitter: 0.2 };
    expect(backoffDelay(jittered, 1, () => 0)).toBe(800);
    expect(backoffDelay(jittered, 1, () => 1)).toBe(1200);
  });
});
