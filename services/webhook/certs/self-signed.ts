import { generateKeyPair, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import forge from 'node-forge';
import { serviceDnsNames } from '../../model/kubernetes';

// Self-signed mode (spec 5): a fresh CA and a server certificate it signs, both RSA-2048, valid one
// year. node-forge builds and signs the X.509 structures; the RSA keys come from Node's native
// generator because forge's pure-JS keygen takes about a second per key (TOOLCHAIN.md) and would
// stall the event loop of a serving replica during rotation. The CA's private key is dropped once
// the server certificate is signed: nothing stores it, so nobody can mint further certificates
// the API server would trust.

/** What the TLS Secret holds: `ca.crt`, `tls.crt`, `tls.key`, all PEM. */
export interface CertificateBundle {
  /** The CA certificate(s) trusted for this webhook: the Secret's `ca.crt` and the registration's caBundle. */
  caPem: string;
  /** The server certificate: the Secret's `tls.crt`. */
  certPem: string;
  /** The server certificate's private key: the Secret's `tls.key`. */
  keyPem: string;
}

export interface SelfSignedRequest {
  serviceName: string;
  namespace: string;
  /** Further subject alternative names: DNS names, or IP addresses (written as IP SANs). */
  extraSans: readonly string[];
  /** Start of validity; injected so tests can make certificates that expire soon. */
  now: Date;
  validityDays?: number;
}

export const DEFAULT_VALIDITY_DAYS = 365;
const RSA_KEY_BITS = 2048;
const DAY_MS = 24 * 60 * 60 * 1000;
// Nodes' clocks drift from the API server's; a certificate that starts "now" could be rejected as
// not yet valid by a peer a few seconds behind.
const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60 * 1000;

/** Service names first, then extra names, without duplicates. */
export function subjectAltNames(
  request: Pick<SelfSignedRequest, 'serviceName' | 'namespace' | 'extraSans'>,
): string[] {
  return [...new Set([...serviceDnsNames(request.serviceName, request.namespace), ...request.extraSans])];
}

const generateKeyPairAsync = promisify(generateKeyPair);

interface PemKeyPair {
  publicKey: string;
  privateKey: string;
}

async function generateRsaKeyPair(): Promise<PemKeyPair> {
  return generateKeyPairAsync('rsa', {
    modulusLength: RSA_KEY_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    // PKCS#1 (`RSA PRIVATE KEY`): what cert-manager and kubeadm write for RSA keys.
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
}

/** A positive random 128-bit serial (RFC 5280: at most 20 octets, must be positive). */
function randomSerialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return bytes.toString('hex');
}

function setValidity(certificate: forge.pki.Certificate, now: Date, validityDays: number): void {
  certificate.validity.notBefore = new Date(now.getTime() - CLOCK_SKEW_ALLOWANCE_MS);
  certificate.validity.notAfter = new Date(now.getTime() + validityDays * DAY_MS);
}

function altNameEntry(name: string): { type: number; value?: string; ip?: string } {
  // GeneralName tags (RFC 5280): 2 = dNSName, 7 = iPAddress.
  return isIP(name) ? { type: 7, ip: name } : { type: 2, value: name };
}

// forge writes PEM with CRLF; everything else (kubectl, openssl, cert-manager) writes LF, and mixed
// endings make equal bundles compare unequal.
function unixLineEndings(pem: string): string {
  return pem.replace(/\r\n/g, '\n');
}

const UTF8_STRING = forge.asn1.Type.UTF8 as unknown as forge.asn1.Class;

/** Generates a CA and a server certificate for the webhook Service; the CA key is not kept. */
export async function generateSelfSignedBundle(request: SelfSignedRequest): Promise<CertificateBundle> {
  const validityDays = request.validityDays ?? DEFAULT_VALIDITY_DAYS;
  // Both keys at once: native keygen runs on the libuv thread pool, so this halves the wait.
  const [caKeys, serverKeys] = await Promise.all([generateRsaKeyPair(), generateRsaKeyPair()]);
  const caPrivateKey = forge.pki.privateKeyFromPem(caKeys.privateKey);

  const ca = forge.pki.createCertificate();
  ca.publicKey = forge.pki.publicKeyFromPem(caKeys.publicKey);
  ca.serialNumber = randomSerialNumber();
  setValidity(ca, request.now, validityDays);
  // A unique CA name per generation (as kube-apiserver's own self-signed CAs do, `<name>-ca@<unix>`):
  // during a rotation the old and the new CA are trusted side by side, and TLS libraries pick the
  // issuer by name first.
  // UTF8String, not forge's default PrintableString: `@` is not a PrintableString character, and
  // Go's strict parser (kube-apiserver calling the webhook) rejects the whole certificate.
  const caAttributes = [
    {
      name: 'commonName',
      value: `${request.serviceName}-ca@${Math.floor(request.now.getTime() / 1000)}`,
      valueTagClass: UTF8_STRING,
    },
    { name: 'organizationName', value: 'forewarn', valueTagClass: UTF8_STRING },
  ];
  ca.setSubject(caAttributes);
  ca.setIssuer(caAttributes);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caPrivateKey, forge.md.sha256.create());

  const server = forge.pki.createCertificate();
  server.publicKey = forge.pki.publicKeyFromPem(serverKeys.publicKey);
  server.serialNumber = randomSerialNumber();
  setValidity(server, request.now, validityDays);
  server.setSubject([
    {
      name: 'commonName',
      value: `${request.serviceName}.${request.namespace}.svc`,
      valueTagClass: UTF8_STRING,
    },
    { name: 'organizationName', value: 'forewarn', valueTagClass: UTF8_STRING },
  ]);
  server.setIssuer(caAttributes);
  server.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: subjectAltNames(request).map(altNameEntry) },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  server.sign(caPrivateKey, forge.md.sha256.create());

  return {
    caPem: unixLineEndings(forge.pki.certificateToPem(ca)),
    certPem: unixLineEndings(forge.pki.certificateToPem(server)),
    keyPem: serverKeys.privateKey,
  };
}
