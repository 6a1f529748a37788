import { X509Certificate } from 'node:crypto';
import { mkdtemp, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../services/logging/logger';
import { ManagedCertificateFiles } from '../../../services/webhook/certs/managed';
import {
  generateSelfSignedBundle,
  type CertificateBundle,
} from '../../../services/webhook/certs/self-signed';
import { startWebhook, tlsRequest, type RunningWebhook } from './harness';
import { waitForCertificates } from '../../support/kubernetes-api/wait-until';

// Managed mode: certificate files written by an external manager, reloaded when they change,
// never replaced by an unusable pair.

const IDENTITY = { serviceName: 'forewarn-webhook', namespace: 'forewarn-system', extraSans: ['127.0.0.1'] };

let first: CertificateBundle;
let second: CertificateBundle;
let directory: string;
let webhook: RunningWebhook;
let files: ManagedCertificateFiles | null = null;

beforeAll(async () => {
  [first, second] = await Promise.all([
    generateSelfSignedBundle({ ...IDENTITY, now: new Date() }),
    generateSelfSignedBundle({ ...IDENTITY, now: new Date() }),
  ]);
});

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'forewarn-managed-'));
  webhook = await startWebhook({
    constraints: { query: async () => ({ ok: true, constraints: [], skippedEntries: 0 }) },
  });
});

afterEach(async () => {
  files?.stop();
  files = null;
  await webhook.close();
  await rm(directory, { recursive: true, force: true });
});

function managedFiles(pollIntervalMs = 60_000): ManagedCertificateFiles {
  files = new ManagedCertificateFiles({
    certFile: join(directory, 'tls.crt'),
    keyFile: join(directory, 'tls.key'),
    target: webhook.server,
    logger: silentLogger(),
    pollIntervalMs,
    debounceMs: 20,
  });
  return files;
}

async function writePair(pair: { certPem: string; keyPem: string }, into = directory): Promise<void> {
  await writeFile(join(into, 'tls.crt'), pair.certPem);
  await writeFile(join(into, 'tls.key'), pair.keyPem);
}

async function served(ca: string): Promise<string> {
  return (await tlsRequest({ port: webhook.port, ca, path: '/readyz', method: 'GET' })).fingerprint;
}

const fingerprint = (bundle: CertificateBundle): string => new X509Certificate(bundle.certPem).fingerprint256;

describe('managed certificate files', () => {
  it('serves the files and reloads them when the manager rewrites them', async () => {
    await writePair(first);
    expect(await managedFiles().start()).toBe('loaded');
    expect(await served(first.caPem)).toBe(fingerprint(first));

    await writePair(second);
    await waitForCertificates(
      async () => (await served(second.caPem)) === fingerprint(second),
      'the rewritten pair is served',
    );
  });

  it('keeps the old pair when the new key does not match, or the files are garbage', async () => {
    await writePair(first);
    const managed = managedFiles();
    await managed.start();

    await writePair({ certPem: second.certPem, keyPem: first.keyPem });
    expect(await managed.reload()).toBe('rejected');
    expect(await served(first.caPem)).toBe(fingerprint(first));

    await writePair({ certPem: 'garbage', keyPem: 'garbage' });
    expect(await managed.reload()).toBe('rejected');
    expect(await served(first.caPem)).toBe(fingerprint(first));

    await writePair(second);
    expect(await managed.reload()).toBe('loaded');
    expect(await served(second.caPem)).toBe(fingerprint(second));
  });

  it('follows a kubelet-style atomic swap of the ..data symlink', async () => {
    // The kubelet writes a new timestamped directory and renames a fresh symlink over `..data`.
    const version1 = join(directory, '..2026_01_01');
    const version2 = join(directory, '..2026_02_01');
    await mkdir(version1);
    await mkdir(version2);
    await writePair(first, version1);
    await writePair(second, version2);
    await symlink(version1, join(directory, '..data'));
    await symlink(join('..data', 'tls.crt'), join(directory, 'tls.crt'));
    await symlink(join('..data', 'tls.key'), join(directory, 'tls.key'));
    await managedFiles().start();
    expect(await served(first.caPem)).toBe(fingerprint(first));

    await symlink(version2, join(directory, '..data_tmp'));
    await rename(join(directory, '..data_tmp'), join(directory, '..data'));
    await waitForCertificates(
      async () => (await served(second.caPem)) === fingerprint(second),
      'the swapped pair is served',
    );
  });

  it('waits for a certificate directory that does not exist yet, then finds the files by polling', async () => {
    // With the directory missing there is nothing to watch: only the polling loop can notice.
    const certificates = join(directory, 'certs');
    files = new ManagedCertificateFiles({
      certFile: join(certificates, 'tls.crt'),
      keyFile: join(certificates, 'tls.key'),
      target: webhook.server,
      logger: silentLogger(),
      pollIntervalMs: 100,
    });
    const managed = files;
    expect(await managed.start()).toBe('unreadable');
    expect(webhook.server.hasCertificate()).toBe(false);

    await mkdir(certificates);
    await writePair(first, certificates);
    await waitForCertificates(
      async () => managed.hasCertificate() && (await served(first.caPem)) === fingerprint(first),
      'the pair is served',
    );
  });
});
