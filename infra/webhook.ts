// The admission warning webhook: ServiceAccount, RBAC (self-signed mode), TLS, Deployment, Service
// (443 -> 8443), PodDisruptionBudget and the ValidatingWebhookConfiguration (spec 4.3-4.5, 5, 8).
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { CertManagement } from './args';
import {
  TMP_MOUNT,
  clusterMeta,
  containerResources,
  containerSecurityContext,
  namespacedMeta,
  objectLabels,
  podSpecBase,
  selectorLabels,
  type BuildContext,
} from './common';
import { CONTROLLER_HTTP_PORT } from './controller';
import { createWebhookRbac, groupResources } from './rbac';
import { WEBHOOK_RESOURCES } from '../services/model/resources';
import { createManagedCertificate, createSelfSignedTls, selfSignedRegistrationOptions } from './tls';

export const WEBHOOK_PORT = 8443;
export const WEBHOOK_SERVICE_PORT = 443;
export const WEBHOOK_COMMAND = ['/webhook'];
export const MANAGED_CERT_DIR = '/etc/webhook/certs';
/** Where the webhook's projected token for the controller (audience forewarn-controller) is mounted. */
export const CONTROLLER_TOKEN_DIR = '/var/run/secrets/forewarn';
export const CONTROLLER_TOKEN_AUDIENCE = 'forewarn-controller';
/** Lifetime asked of the kubelet, which renews the file at 80% of it; the controller caches ≤ 5 min. */
const CONTROLLER_TOKEN_SECONDS = 3600;

/**
 * The projected ServiceAccount token the webhook shows the controller (DESIGN.md 5): valid for the
 * controller's audience only, so it cannot be replayed against the API server.
 */
const controllerTokenVolume = {
  name: 'controller-token',
  projected: {
    sources: [
      {
        serviceAccountToken: {
          audience: CONTROLLER_TOKEN_AUDIENCE,
          expirationSeconds: CONTROLLER_TOKEN_SECONDS,
          path: 'token',
        },
      },
    ],
  },
};

type RuleWithOperations = k8s.types.input.admissionregistration.v1.RuleWithOperations;

/** What the webhook intercepts (spec 4.4): CREATE and UPDATE of namespaced workloads and their companions. */
export const WEBHOOK_RULES: RuleWithOperations[] = groupResources(WEBHOOK_RESOURCES).map((rule) => ({
  ...rule,
  apiVersions: ['v1'],
  operations: ['CREATE', 'UPDATE'],
  scope: 'Namespaced',
}));

export interface WebhookResources {
  service: k8s.core.v1.Service;
  deployment: k8s.apps.v1.Deployment;
  configuration: k8s.admissionregistration.v1.ValidatingWebhookConfiguration;
  podDisruptionBudget?: k8s.policy.v1.PodDisruptionBudget;
  /** PEM of the CA trusted by the registration (self-signed mode only). */
  caCertificate?: pulumi.Output<string>;
}

/** The webhook's command-line flags (spec section 8 plus the names it manages). */
export function webhookArgs(ctx: BuildContext): string[] {
  const { config } = ctx;
  const { names } = config;
  const selfSigned = config.webhook.certManagement === CertManagement.SelfSigned;
  return [
    `--addr=:${WEBHOOK_PORT}`,
    `--controller-url=http://${names.controller}.${names.namespace}.svc:${CONTROLLER_HTTP_PORT}`,
    `--namespace=${names.namespace}`,
    `--self-signed=${selfSigned}`,
    `--webhook-name=${names.webhookConfiguration}`,
    `--service-name=${names.webhook}`,
    `--secret-name=${names.tlsSecret}`,
    ...(selfSigned
      ? []
      : [`--tls-cert-file=${MANAGED_CERT_DIR}/tls.crt`, `--tls-key-file=${MANAGED_CERT_DIR}/tls.key`]),
    `--controller-token-file=${CONTROLLER_TOKEN_DIR}/token`,
    ...config.webhook.extraArgs,
  ];
}

// eslint-disable-next-line max-lines-per-function -- wiring in one sequence; splitting it is left from issue 14
export function createWebhook(ctx: BuildContext): WebhookResources {
  const { config } = ctx;
  const { names, webhook } = config;
  const selfSigned = webhook.certManagement === CertManagement.SelfSigned;
  const selector = selectorLabels(config, 'webhook');

  const serviceAccount = new k8s.core.v1.ServiceAccount(
    names.webhook,
    { metadata: namespacedMeta(ctx, names.webhook, 'webhook') },
    ctx.opts,
  );
  // In managed mode the webhook only reads mounted files: it gets no permission at all.
  const bindings = selfSigned ? createWebhookRbac(ctx, serviceAccount) : [];
  const selfSignedTls = selfSigned ? createSelfSignedTls(ctx) : undefined;
  const certificate = selfSigned ? undefined : createManagedCertificate(ctx);

  // Managed mode: the Secret cert-manager writes is mounted; its files change in place on renewal.
  const certVolumes = selfSigned ? [] : [{ name: 'certs', secret: { secretName: names.tlsSecret } }];
  const tokenMount = { name: controllerTokenVolume.name, mountPath: CONTROLLER_TOKEN_DIR, readOnly: true };
  const volumeMounts = selfSigned
    ? [TMP_MOUNT, tokenMount]
    : [TMP_MOUNT, tokenMount, { name: 'certs', mountPath: MANAGED_CERT_DIR, readOnly: true }];

  const deployment = new k8s.apps.v1.Deployment(
    names.webhook,
    {
      metadata: namespacedMeta(ctx, names.webhook, 'webhook'),
      spec: {
        replicas: webhook.replicas,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: objectLabels(config, 'webhook') },
          spec: {
            ...podSpecBase(ctx, [...certVolumes, controllerTokenVolume]),
            serviceAccountName: serviceAccount.metadata.name,
            // Managed mode needs no API access: no API token at all, only the controller's audience
            // token above. Self-signed mode keeps it to write its Secret and its registration.
            automountServiceAccountToken: selfSigned,
            // Preferred, not required: a one-node cluster still runs every replica.
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 100,
                    podAffinityTerm: {
                      topologyKey: 'kubernetes.io/hostname',
                      labelSelector: { matchLabels: selector },
                    },
                  },
                ],
              },
            },
            containers: [
              {
                name: 'webhook',
                image: config.images.webhook,
                imagePullPolicy: config.images.pullPolicy,
                command: WEBHOOK_COMMAND,
                args: webhookArgs(ctx),
                ports: [{ name: 'https', containerPort: WEBHOOK_PORT, protocol: 'TCP' }],
                livenessProbe: {
                  httpGet: { path: '/healthz', port: 'https', scheme: 'HTTPS' },
                  initialDelaySeconds: 10,
                  periodSeconds: 10,
                },
                readinessProbe: {
                  httpGet: { path: '/readyz', port: 'https', scheme: 'HTTPS' },
                  initialDelaySeconds: 5,
                  periodSeconds: 5,
                },
                resources: containerResources(webhook.resources),
                securityContext: containerSecurityContext(),
                volumeMounts,
              },
            ],
          },
        },
      },
    },
    // The pods start with their permissions and their certificate already in place.
    {
      ...ctx.opts,
      dependsOn: [
        ...bindings,
        ...(selfSignedTls ? [selfSignedTls.secret] : []),
        ...(certificate ? [certificate] : []),
      ],
    },
  );

  const service = new k8s.core.v1.Service(
    names.webhook,
    {
      metadata: namespacedMeta(ctx, names.webhook, 'webhook'),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: 'https', port: WEBHOOK_SERVICE_PORT, targetPort: 'https', protocol: 'TCP' }],
      },
    },
    ctx.opts,
  );

  const podDisruptionBudget = webhook.pdb.enabled
    ? new k8s.policy.v1.PodDisruptionBudget(
        names.webhook,
        {
          metadata: namespacedMeta(ctx, names.webhook, 'webhook'),
          spec: { minAvailable: webhook.pdb.minAvailable, selector: { matchLabels: selector } },
        },
        ctx.opts,
      )
    : undefined;

  const configuration = new k8s.admissionregistration.v1.ValidatingWebhookConfiguration(
    names.webhookConfiguration,
    {
      metadata: {
        ...clusterMeta(ctx, names.webhookConfiguration, 'webhook'),
        // Managed mode: cert-manager's CA injector writes this Certificate's CA into clientConfig.caBundle.
        annotations: selfSigned
          ? { ...config.annotations }
          : {
              ...config.annotations,
              'cert-manager.io/inject-ca-from': `${names.namespace}/${names.certificate}`,
            },
      },
      webhooks: [
        {
          name: names.webhookEntry,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: webhook.failurePolicy,
          timeoutSeconds: webhook.timeoutSeconds,
          matchPolicy: 'Equivalent',
          clientConfig: {
            service: {
              name: service.metadata.name,
              namespace: ctx.namespace,
              path: '/validate',
              port: WEBHOOK_SERVICE_PORT,
            },
            caBundle: selfSignedTls?.caBundle,
          },
          rules: WEBHOOK_RULES,
          namespaceSelector: {
            matchExpressions: [
              { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: webhook.excludedNamespaces },
            ],
          },
        },
      ],
    },
    // Registered once the pods serve, so the API server's first calls already get warnings back.
    selfSigned ? selfSignedRegistrationOptions(ctx, [deployment]) : { ...ctx.opts, dependsOn: [deployment] },
  );

  return {
    service,
    deployment,
    configuration,
    podDisruptionBudget,
    caCertificate: selfSignedTls?.caCertPem,
  };
}
