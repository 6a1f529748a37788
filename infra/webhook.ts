// The admission warning webhook: ServiceAccount, RBAC (self-signed mode), TLS, Deployment, Service
// (443 -> 8443), PodDisruptionBudget and the ValidatingWebhookConfiguration (spec 4.3-4.5, 5, 8).
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { CertManagement } from './args';
import {
  clusterMeta,
  createProcessDeployment,
  createProcessService,
  createServiceAccount,
  namespacedMeta,
  processContainer,
  selectorLabels,
  type BuildContext,
} from './common';
import { CONTROLLER_HTTP_PORT } from './controller';
import { createWebhookRbac, groupResources } from './rbac';
import { WEBHOOK_RESOURCES } from '../services/model/resources';
import {
  createManagedCertificate,
  createSelfSignedTls,
  selfSignedRegistrationOptions,
  type SelfSignedTls,
} from './tls';

export const WEBHOOK_PORT = 8443;
export const WEBHOOK_SERVICE_PORT = 443;
export const WEBHOOK_COMMAND = ['/webhook'];
export const MANAGED_CERT_DIR = '/etc/webhook/certs';
/** Where the webhook's projected token for the controller (audience forewarn-controller) is mounted. */
export const CONTROLLER_TOKEN_DIR = '/var/run/secrets/forewarn';
export const CONTROLLER_TOKEN_AUDIENCE = 'forewarn-controller';
/** Where the CA of the API server's client certificate is mounted (admissionWebhook.apiServerClientCa). */
export const API_SERVER_CA_DIR = '/etc/webhook/api-server-ca';
const API_SERVER_CA_KEY = 'ca.crt';
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

type Container = k8s.types.input.core.v1.Container;
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
    ...apiServerIdentityArgs(ctx),
    ...config.webhook.extraArgs,
  ];
}

/** The flags that let the webhook recognise the API server by its client certificate, when configured. */
function apiServerIdentityArgs(ctx: BuildContext): string[] {
  const ca = ctx.config.webhook.apiServerClientCa;
  if (!ca) return [];
  return [
    `--api-server-client-ca-file=${API_SERVER_CA_DIR}/${API_SERVER_CA_KEY}`,
    ...ca.clientNames.map((clientName) => `--api-server-client-name=${clientName}`),
  ];
}

/** The ConfigMap of the API server's client CA (a CA certificate is public: no Secret needed). */
function createApiServerCaConfigMap(ctx: BuildContext): k8s.core.v1.ConfigMap | undefined {
  const ca = ctx.config.webhook.apiServerClientCa;
  if (!ca) return undefined;
  const name = apiServerCaConfigMapName(ctx);
  return new k8s.core.v1.ConfigMap(
    name,
    { metadata: namespacedMeta(ctx, name, 'webhook'), data: { [API_SERVER_CA_KEY]: ca.caCertificate } },
    ctx.opts,
  );
}

function apiServerCaConfigMapName(ctx: BuildContext): string {
  return `${ctx.config.names.webhook}-api-server-ca`;
}

/** The webhook's serving certificate: created here (self-signed) or by cert-manager (managed). */
interface WebhookCertificate {
  selfSignedTls?: SelfSignedTls;
  managed?: pulumi.Resource;
}

/** The container: HTTPS only, with the controller's token and, in managed mode, cert-manager's files. */
function webhookContainer(ctx: BuildContext, selfSigned: boolean): Container {
  const tokenMount = { name: controllerTokenVolume.name, mountPath: CONTROLLER_TOKEN_DIR, readOnly: true };
  const caMounts = ctx.config.webhook.apiServerClientCa
    ? [{ name: 'api-server-ca', mountPath: API_SERVER_CA_DIR, readOnly: true }]
    : [];
  return processContainer(ctx, 'webhook', {
    command: WEBHOOK_COMMAND,
    args: webhookArgs(ctx),
    ports: [{ name: 'https', containerPort: WEBHOOK_PORT, protocol: 'TCP' }],
    probePort: 'https',
    probeScheme: 'HTTPS',
    resources: ctx.config.webhook.resources,
    extraMounts: selfSigned
      ? [tokenMount, ...caMounts]
      : [tokenMount, { name: 'certs', mountPath: MANAGED_CERT_DIR, readOnly: true }, ...caMounts],
  });
}

/** The pods start with their permissions and their certificate already in place. */
function createWebhookDeployment(
  ctx: BuildContext,
  serviceAccount: k8s.core.v1.ServiceAccount,
  certificate: WebhookCertificate,
  bindings: pulumi.Resource[],
  apiServerCa: k8s.core.v1.ConfigMap | undefined,
): k8s.apps.v1.Deployment {
  const { config } = ctx;
  const { names, webhook } = config;
  const selfSigned = webhook.certManagement === CertManagement.SelfSigned;
  // Managed mode: the Secret cert-manager writes is mounted; its files change in place on renewal.
  const certVolumes = selfSigned ? [] : [{ name: 'certs', secret: { secretName: names.tlsSecret } }];
  const caVolumes = apiServerCa
    ? [{ name: 'api-server-ca', configMap: { name: apiServerCa.metadata.name } }]
    : [];
  const pods = {
    replicas: webhook.replicas,
    serviceAccount,
    container: webhookContainer(ctx, selfSigned),
    extraVolumes: [...certVolumes, controllerTokenVolume, ...caVolumes],
    podFields: {
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
                labelSelector: { matchLabels: selectorLabels(config, 'webhook') },
              },
            },
          ],
        },
      },
    },
  };
  return createProcessDeployment(ctx, names.webhook, 'webhook', pods, [
    ...bindings,
    ...(certificate.selfSignedTls ? [certificate.selfSignedTls.secret] : []),
    ...(certificate.managed ? [certificate.managed] : []),
    ...(apiServerCa ? [apiServerCa] : []),
  ]);
}

function createWebhookDisruptionBudget(ctx: BuildContext): k8s.policy.v1.PodDisruptionBudget | undefined {
  const { names, webhook } = ctx.config;
  if (!webhook.pdb.enabled) return undefined;
  return new k8s.policy.v1.PodDisruptionBudget(
    names.webhook,
    {
      metadata: namespacedMeta(ctx, names.webhook, 'webhook'),
      spec: {
        minAvailable: webhook.pdb.minAvailable,
        selector: { matchLabels: selectorLabels(ctx.config, 'webhook') },
      },
    },
    ctx.opts,
  );
}

/** Registered once the pods serve, so the API server's first calls already get warnings back. */
function createWebhookRegistration(
  ctx: BuildContext,
  service: k8s.core.v1.Service,
  deployment: k8s.apps.v1.Deployment,
  selfSignedTls: SelfSignedTls | undefined,
): k8s.admissionregistration.v1.ValidatingWebhookConfiguration {
  const { config } = ctx;
  const { names, webhook } = config;
  const selfSigned = webhook.certManagement === CertManagement.SelfSigned;
  return new k8s.admissionregistration.v1.ValidatingWebhookConfiguration(
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
    selfSigned ? selfSignedRegistrationOptions(ctx, [deployment]) : { ...ctx.opts, dependsOn: [deployment] },
  );
}

export function createWebhook(ctx: BuildContext): WebhookResources {
  const { names, webhook } = ctx.config;
  const selfSigned = webhook.certManagement === CertManagement.SelfSigned;
  const serviceAccount = createServiceAccount(ctx, names.webhook, 'webhook');
  // In managed mode the webhook only reads mounted files: it gets no permission at all.
  const bindings = selfSigned ? createWebhookRbac(ctx, serviceAccount) : [];
  const certificate: WebhookCertificate = selfSigned
    ? { selfSignedTls: createSelfSignedTls(ctx) }
    : { managed: createManagedCertificate(ctx) };
  const deployment = createWebhookDeployment(
    ctx,
    serviceAccount,
    certificate,
    bindings,
    createApiServerCaConfigMap(ctx),
  );
  const service = createProcessService(ctx, names.webhook, 'webhook', [
    { name: 'https', port: WEBHOOK_SERVICE_PORT, targetPort: 'https', protocol: 'TCP' },
  ]);
  const podDisruptionBudget = createWebhookDisruptionBudget(ctx);
  const configuration = createWebhookRegistration(ctx, service, deployment, certificate.selfSignedTls);
  return {
    service,
    deployment,
    configuration,
    podDisruptionBudget,
    caCertificate: certificate.selfSignedTls?.caCertPem,
  };
}
