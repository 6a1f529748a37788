// The webhook's serving certificate, in one of two modes (spec section 5).
//
// self-signed: the component creates a CA and a server certificate with @pulumi/tls, the `<webhook>-tls`
// Secret and the registration's caBundle, so the API server trusts the webhook from its very first call.
// From then on the webhook owns them: it rotates the certificate in the cluster and re-syncs the bundle.
// The Secret's data and the bundle are therefore created once and then ignored (`ignoreChanges`), so a
// later `pulumi up` never rolls a rotated certificate back.
//
// managed: a cert-manager Certificate writes the Secret, cert-manager's CA injector fills the bundle
// (annotation `cert-manager.io/inject-ca-from`), and the webhook reads the mounted files.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import * as tls from '@pulumi/tls';
import { namespacedMeta, type BuildContext } from './common';
import { serviceDnsNames } from '../services/model/kubernetes';

/** 1 year, as the webhook's own certificates (spec section 5). */
export const SELF_SIGNED_VALIDITY_HOURS = 8760;
export const RSA_BITS = 2048;

export interface SelfSignedTls {
  secret: k8s.core.v1.Secret;
  /** PEM of the CA that signed the first server certificate. */
  caCertPem: pulumi.Output<string>;
  /** base64 of the CA PEM, as `clientConfig.caBundle` wants it. */
  caBundle: pulumi.Output<string>;
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** Resource options of objects whose content the webhook takes over after creation. */
function handedOverToWebhook(ctx: BuildContext, paths: string[]): pulumi.CustomResourceOptions {
  return { ...ctx.opts, ignoreChanges: paths };
}

export function createSelfSignedTls(ctx: BuildContext): SelfSignedTls {
  const { names } = ctx.config;
  const dnsNames = serviceDnsNames(names.webhook, names.namespace);

  const caKey = new tls.PrivateKey(`${names.webhook}-ca`, { algorithm: 'RSA', rsaBits: RSA_BITS }, ctx.opts);
  // The provider marks the key secret in a real deployment; wrapping it again keeps it secret everywhere
  // it flows (and under mocks, which do not apply the provider's secret outputs).
  const caKeyPem = pulumi.secret(caKey.privateKeyPem);
  const caCert = new tls.SelfSignedCert(
    `${names.webhook}-ca`,
    {
      privateKeyPem: caKeyPem,
      isCaCertificate: true,
      validityPeriodHours: SELF_SIGNED_VALIDITY_HOURS,
      allowedUses: ['cert_signing', 'crl_signing', 'digital_signature', 'key_encipherment'],
      subject: { commonName: `${names.webhook}-ca`, organization: 'Forewarn' },
    },
    ctx.opts,
  );

  const serverKey = new tls.PrivateKey(names.webhook, { algorithm: 'RSA', rsaBits: RSA_BITS }, ctx.opts);
  const serverKeyPem = pulumi.secret(serverKey.privateKeyPem);
  const request = new tls.CertRequest(
    names.webhook,
    {
      privateKeyPem: serverKeyPem,
      dnsNames,
      subject: { commonName: dnsNames[2], organization: 'Forewarn' },
    },
    ctx.opts,
  );
  const serverCert = new tls.LocallySignedCert(
    names.webhook,
    {
      certRequestPem: request.certRequestPem,
      caPrivateKeyPem: caKeyPem,
      caCertPem: caCert.certPem,
      validityPeriodHours: SELF_SIGNED_VALIDITY_HOURS,
      allowedUses: ['digital_signature', 'key_encipherment', 'server_auth'],
    },
    ctx.opts,
  );

  // The layout of the Secret the webhook creates itself (ca.crt, tls.crt, tls.key), so it recognises and
  // reuses this one. The CA key stays out of the cluster: on rotation the webhook issues a new CA and
  // keeps trusting the old one until it expires.
  const data = pulumi.secret(
    pulumi.all([serverCert.certPem, serverKeyPem, caCert.certPem]).apply(([crt, key, ca]) => ({
      'tls.crt': base64(crt),
      'tls.key': base64(key),
      'ca.crt': base64(ca),
    })),
  );
  const secret = new k8s.core.v1.Secret(
    names.tlsSecret,
    { metadata: namespacedMeta(ctx, names.tlsSecret, 'webhook'), type: 'kubernetes.io/tls', data },
    handedOverToWebhook(ctx, ['data']),
  );
  return { secret, caCertPem: caCert.certPem, caBundle: caCert.certPem.apply(base64) };
}

/** Ignore paths of the registration in self-signed mode: the bundle the webhook re-syncs. */
export const SELF_SIGNED_REGISTRATION_IGNORED = ['webhooks[0].clientConfig.caBundle'];

/** Options of the self-signed registration: the bundle is created by Pulumi, then owned by the webhook. */
export function selfSignedRegistrationOptions(
  ctx: BuildContext,
  dependsOn: pulumi.Resource[],
): pulumi.CustomResourceOptions {
  return { ...handedOverToWebhook(ctx, SELF_SIGNED_REGISTRATION_IGNORED), dependsOn };
}

/** A cert-manager Certificate writing the `<webhook>-tls` Secret (managed mode). */
export function createManagedCertificate(ctx: BuildContext): k8s.apiextensions.CustomResource {
  const { names, webhook } = ctx.config;
  if (!webhook.issuerRef) {
    // resolveForewarnArgs reports a managed configuration without an issuer before anything is built.
    throw new Error('managed certificates need an issuer');
  }
  const meta = namespacedMeta(ctx, names.certificate, 'webhook');
  return new k8s.apiextensions.CustomResource(
    names.certificate,
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: {
        ...meta,
        // Pulumi waits until the certificate is issued, so the webhook pods find their Secret to mount.
        annotations: { ...ctx.config.annotations, 'pulumi.com/waitFor': 'condition=Ready' },
      },
      spec: {
        secretName: names.tlsSecret,
        secretTemplate: { labels: meta.labels },
        duration: webhook.duration,
        renewBefore: webhook.renewBefore,
        dnsNames: serviceDnsNames(names.webhook, names.namespace),
        issuerRef: webhook.issuerRef,
        privateKey: { algorithm: 'RSA', size: RSA_BITS, rotationPolicy: 'Always' },
        usages: ['server auth', 'digital signature', 'key encipherment'],
      },
    },
    ctx.opts,
  );
}
