import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';
import type { CertificateBundle } from './self-signed';
import { errorMessage } from '../../model/error-message';

// Decides whether certificate material can be served, reused or must be replaced. Pure functions
// over PEM text and an injected "now", read with Node's native X509Certificate (the parser OpenSSL
// itself uses when serving, so "accepted here" means "accepted by the TLS server").

/** What the HTTPS server needs: a certificate (chain) and its private key, PEM. */
export interface ServingPair {
  certPem: string;
  keyPem: string;
}

export const RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate block of a PEM text, in order (a `tls.crt` may carry intermediates, a `ca.crt` several CAs). */
export function splitPemCertificates(pem: string): string[] {
  return pem.match(PEM_CERTIFICATE) ?? [];
}

export type PairVerdict =
  { usable: true; notAfter: Date; leaf: X509Certificate } | { usable: false; reason: string };

function parseCertificate(pem: string): X509Certificate | string {
  try {
    return new X509Certificate(pem);
  } catch (error) {
    return `certificate does not parse: ${errorMessage(error)}`;
  }
}

function parseKey(pem: string): KeyObject | string {
  try {
    return createPrivateKey(pem);
  } catch (error) {
    return `private key does not parse: ${errorMessage(error)}`;
  }
}

/**
 * Whether a certificate and key can be served now: both parse, the key belongs to the first
 * certificate, and that certificate has not expired. Managed mode uses this alone: the external
 * manager decides names and issuer.
 */
export function checkServingPair(pair: ServingPair, now: Date): PairVerdict {
  const [leafPem] = splitPemCertificates(pair.certPem);
  if (!leafPem) return { usable: false, reason: 'no PEM certificate found' };
  const leaf = parseCertificate(leafPem);
  if (typeof leaf === 'string') return { usable: false, reason: leaf };
  const key = parseKey(pair.keyPem);
  if (typeof key === 'string') return { usable: false, reason: key };
  if (!leaf.checkPrivateKey(key))
    return { usable: false, reason: 'private key does not match the certificate' };
  const notAfter = new Date(leaf.validTo);
  if (notAfter.getTime() <= now.getTime()) {
    return { usable: false, reason: `certificate expired at ${notAfter.toISOString()}` };
  }
  return { usable: true, notAfter, leaf };
}

export type BundleVerdict =
  | { status: 'valid'; notAfter: Date }
  /** Servable, but under the renewal threshold (or it lacks a required name): replace it. */
  | { status: 'renew'; notAfter: Date; reason: string }
  | { status: 'invalid'; reason: string };

export interface BundleExpectation {
  now: Date;
  /** DNS names and IP addresses the server certificate must cover. */
  requiredSans: readonly string[];
  renewBeforeMs: number;
}

/** `DNS:a, IP Address:127.0.0.1` → ['a', '127.0.0.1']. */
export function certificateSans(certificate: X509Certificate): string[] {
  return (certificate.subjectAltName ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .map((entry) => entry.replace(/^(DNS|IP Address):/, ''))
    .filter((entry) => entry.length > 0);
}

function normaliseSan(name: string): string {
  // Node prints IPv6 SANs in full upper-case form; compare addresses case-insensitively.
  return isIP(name) === 6 ? name.toLowerCase() : name;
}

/**
 * Self-signed mode: can this Secret content be kept? It must be servable (checkServingPair), be
 * signed by one of the CAs in `ca.crt` (the bundle the API server will trust), cover the required
 * names, and have more than the renewal threshold left, counting the issuing CA's expiry too.
 */
export function checkBundle(bundle: CertificateBundle, expectation: BundleExpectation): BundleVerdict {
  const pair = checkServingPair(bundle, expectation.now);
  if (!pair.usable) return { status: 'invalid', reason: pair.reason };

  const authorities = splitPemCertificates(bundle.caPem).map(parseCertificate);
  const unparsable = authorities.find((authority): authority is string => typeof authority === 'string');
  if (unparsable) return { status: 'invalid', reason: `ca.crt: ${unparsable}` };
  const issuer = authorities.find(
    (authority): authority is X509Certificate =>
      typeof authority !== 'string' &&
      pair.leaf.checkIssued(authority) &&
      pair.leaf.verify(authority.publicKey),
  );
  if (!issuer) return { status: 'invalid', reason: 'tls.crt is not signed by a CA in ca.crt' };

  const encodingProblem = nameEncodingProblem(pair.leaf.toString()) ?? nameEncodingProblem(issuer.toString());
  if (encodingProblem) return { status: 'invalid', reason: encodingProblem };

  const notAfter = new Date(Math.min(pair.notAfter.getTime(), new Date(issuer.validTo).getTime()));
  if (notAfter.getTime() <= expectation.now.getTime()) {
    return { status: 'invalid', reason: `issuing CA expired at ${notAfter.toISOString()}` };
  }
  const present = new Set(certificateSans(pair.leaf).map(normaliseSan));
  const missing = expectation.requiredSans.filter((name) => !present.has(normaliseSan(name)));
  if (missing.length > 0) {
    return { status: 'renew', notAfter, reason: `certificate lacks the names ${missing.join(', ')}` };
  }
  const remainingMs = notAfter.getTime() - expectation.now.getTime();
  if (remainingMs < expectation.renewBeforeMs) {
    const days = Math.floor(remainingMs / (24 * 60 * 60 * 1000));
    return {
      status: 'renew',
      notAfter,
      reason: `certificate expires in ${days} days (${notAfter.toISOString()})`,
    };
  }
  return { status: 'valid', notAfter };
}

const PRINTABLE_STRING_TAG = 19;
const PRINTABLE_STRING_CHARACTERS = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/**
 * A name attribute encoded as PrintableString with characters PrintableString forbids. OpenSSL and
 * Node accept such certificates, Go does not: kube-apiserver would refuse to call the webhook.
 * (Certificates from Forewarn versions before the fix have such a CA name; they are replaced.)
 */
export function nameEncodingProblem(pem: string): string | undefined {
  let certificate: forge.pki.Certificate;
  try {
    certificate = forge.pki.certificateFromPem(pem);
  } catch {
    return undefined; // not RSA or not parsable by forge: Node's checks above decide
  }
  for (const attribute of [...certificate.subject.attributes, ...certificate.issuer.attributes]) {
    const tag = attribute.valueTagClass as unknown as number;
    if (
      tag === PRINTABLE_STRING_TAG &&
      typeof attribute.value === 'string' &&
      !PRINTABLE_STRING_CHARACTERS.test(attribute.value)
    )
      return `certificate name ${attribute.name ?? attribute.type}="${attribute.value}" is not a valid PrintableString; strict TLS clients (kube-apiserver) reject it`;
  }
  return undefined;
}

/**
 * The CAs still worth trusting after a rotation: the new CA first, then the previous ones that
 * have not expired, so replicas still serving the previous certificate stay trusted while they
 * pick up the new one. Bounded, so a long history cannot grow the bundle forever.
 */
export function rotatedCaBundle(newCaPem: string, previousCaPem: string | null, now: Date): string {
  const keep = (pem: string): boolean => {
    const parsed = parseCertificate(pem);
    return typeof parsed !== 'string' && new Date(parsed.validTo).getTime() > now.getTime();
  };
  const previous = previousCaPem ? splitPemCertificates(previousCaPem).filter(keep) : [];
  const blocks = [...new Set([...splitPemCertificates(newCaPem), ...previous])].slice(0, MAX_TRUSTED_CAS);
  return blocks.map((block) => `${block}\n`).join('');
}

const MAX_TRUSTED_CAS = 3;

/** Identity of served material, to skip reloading what is already served. */
export function pairIdentity(pair: ServingPair): string {
  return `${pair.certPem.trim()}\n${pair.keyPem.trim()}`;
}
