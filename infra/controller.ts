// The controller: ServiceAccount, read-only RBAC, Deployment, Service (HTTP 8080, MCP 8090) and the
// NetworkPolicy that limits who reaches those ports.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import * as tls from '@pulumi/tls';
import {
  createProcessDeployment,
  createProcessService,
  createServiceAccount,
  namespacedMeta,
  processContainer,
  selectorLabels,
  type BuildContext,
} from './common';
import { createControllerRbac } from './rbac';
import type { ResolvedResources } from './resolve';
import { parseQuantity } from '../services/model/quantity';
import { formatParamKind } from '../services/model/param-kinds';
import { CONTROLLER_NODE_FLAGS } from './node-flags';

export const CONTROLLER_HTTP_PORT = 8080;
export const CONTROLLER_MCP_PORT = 8090;
/**
 * The image's default command; set explicitly because Kubernetes `args` would otherwise replace it.
 * The Node flags are the image's own (Dockerfile, infra/node-flags.ts).
 */
export const CONTROLLER_COMMAND = ['node', ...CONTROLLER_NODE_FLAGS, '/app/dist/services/controller/main.js'];

/** Where the reference key's Secret is mounted; the controller reads its `key` entry. */
export const REFERENCE_KEY_DIRECTORY = '/etc/forewarn/reference-key';

/** The controller's command-line flags (see DESIGN.md section 2). */
export function controllerArgs(ctx: BuildContext): pulumi.Output<string[]> {
  const { config } = ctx;
  const controller = config.controller;
  return pulumi
    .all([controller.flowobserverAddress, controller.contact])
    .apply(([flowobserverAddress, contact]) => [
      `--port=${CONTROLLER_HTTP_PORT}`,
      `--mcp-port=${CONTROLLER_MCP_PORT}`,
      `--mcp=${controller.mcp}`,
      `--detail-level=${controller.detailLevel}`,
      // Its own registration is never reported as a constraint.
      `--own-webhook=${config.names.webhookConfiguration}`,
      // Unredacted answers for the webhook's projected token alone (DESIGN.md 5).
      '--api-auth=tokenreview',
      `--webhook-service-account=${config.names.namespace}/${config.names.webhook}`,
      ...(flowobserverAddress ? [`--flowobserver-address=${flowobserverAddress}`] : []),
      ...(contact ? [`--contact=${contact}`] : []),
      ...(controller.rescanInterval ? [`--rescan-interval=${controller.rescanInterval}`] : []),
      // The same list the ClusterRole grants (infra/rbac.ts): watched only where it may be read.
      ...(controller.paramKinds.length > 0
        ? [`--param-kinds=${controller.paramKinds.map(formatParamKind).join(',')}`]
        : []),
      // The workloads at risk as PolicyReports; the ClusterRole grants their writes only then.
      ...(controller.policyReports ? ['--policy-reports'] : []),
      `--reference-key-file=${REFERENCE_KEY_DIRECTORY}/key`,
      ...controller.extraArgs,
    ]);
}

export interface ControllerResources {
  service: k8s.core.v1.Service;
  deployment: k8s.apps.v1.Deployment;
  /** Unset when `controller.networkPolicy.enabled` is false. */
  networkPolicy?: k8s.networking.v1.NetworkPolicy;
  /** Unset when `controller.referenceKeySecret` names an existing Secret. */
  referenceKeySecret?: k8s.core.v1.Secret;
}

/**
 * The Secret of the opaque-reference key (docs/operations.md). Its 256 random bits come from an
 * Ed25519 key of the TLS provider, the one source of randomness among the component's providers
 * (@pulumi/random is not one of them); the key's PEM text is the HMAC key, kept in Pulumi's state as
 * a secret like the webhook's TLS keys.
 */
function createReferenceKeySecret(ctx: BuildContext): k8s.core.v1.Secret {
  const name = ctx.config.names.referenceKeySecret;
  const key = new tls.PrivateKey(name, { algorithm: 'ED25519' }, ctx.opts);
  return new k8s.core.v1.Secret(
    name,
    {
      metadata: namespacedMeta(ctx, name, 'controller'),
      type: 'Opaque',
      data: pulumi.secret(key.privateKeyPem.apply((pem) => ({ key: Buffer.from(pem).toString('base64') }))),
    },
    ctx.opts,
  );
}

/**
 * The controller's V8 heap limit: three quarters of the container's memory limit, the rest for what
 * lives outside the heap (~100 MiB measured: code, buffers, the young generation). Without it V8
 * sizes its heap from the node's memory and lets garbage of the first sync grow past the container's
 * limit (597 MiB peak at 100,000 constraints, 418 MiB with a 384 MiB heap limit: docs/operations.md).
 */
export function heapLimitMegabytes(resources: ResolvedResources): number {
  const { numerator, denominator } = parseQuantity(resources.limits.memory);
  return Number((numerator * 3n) / (denominator * 4n * 1_048_576n));
}

export function createController(ctx: BuildContext): ControllerResources {
  const { config } = ctx;
  const name = config.names.controller;

  const serviceAccount = createServiceAccount(ctx, name, 'controller');
  const binding = createControllerRbac(ctx, serviceAccount);

  const ports = [{ name: 'http', containerPort: CONTROLLER_HTTP_PORT, protocol: 'TCP' }];
  if (config.controller.mcp) {
    ports.push({ name: 'mcp', containerPort: CONTROLLER_MCP_PORT, protocol: 'TCP' });
  }

  const referenceKeySecret = config.controller.referenceKeySecret ? undefined : createReferenceKeySecret(ctx);
  const referenceKeyVolume = {
    name: 'reference-key',
    secret: {
      secretName: referenceKeySecret?.metadata.name ?? config.controller.referenceKeySecret,
      items: [{ key: 'key', path: 'key' }],
    },
  };

  // Not ready until the index completed its first sync: the Service sends no traffic before.
  const container = processContainer(ctx, 'controller', {
    command: CONTROLLER_COMMAND,
    args: controllerArgs(ctx),
    ports,
    probePort: 'http',
    resources: config.controller.resources,
    extraMounts: [{ name: 'reference-key', mountPath: REFERENCE_KEY_DIRECTORY, readOnly: true }],
    env: [
      {
        name: 'NODE_OPTIONS',
        value: `--max-old-space-size=${heapLimitMegabytes(config.controller.resources)}`,
      },
    ],
  });
  // Start once its permissions exist, so the first list calls do not fail with 403.
  const deployment = createProcessDeployment(
    ctx,
    name,
    'controller',
    {
      replicas: config.controller.replicas,
      serviceAccount,
      container,
      extraVolumes: [referenceKeyVolume],
    },
    [binding, ...(referenceKeySecret ? [referenceKeySecret] : [])],
  );

  const service = createProcessService(
    ctx,
    name,
    'controller',
    ports.map((port) => ({
      name: port.name,
      port: port.containerPort,
      targetPort: port.name,
      protocol: 'TCP',
    })),
  );
  const networkPolicy = config.controller.networkPolicy.enabled
    ? createControllerNetworkPolicy(
        ctx,
        ports.map((port) => port.containerPort),
      )
    : undefined;
  return { service, deployment, networkPolicy, referenceKeySecret };
}

/** The label every namespace carries with its own name (Kubernetes sets it, 1.22+). */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * Admits to the controller's ports the webhook pods of this instance and the pods of the namespaces
 * the user lists, nothing else. Kubelet probes and `kubectl port-forward` do not cross the pod
 * network as another pod's traffic (port-forward enters the pod's own network namespace through the
 * kubelet), so they keep working; the webhook pods are not selected, so the API server still
 * reaches them.
 */
function createControllerNetworkPolicy(ctx: BuildContext, ports: number[]): k8s.networking.v1.NetworkPolicy {
  const { config } = ctx;
  const { allowedNamespaces } = config.controller.networkPolicy;
  const from: k8s.types.input.networking.v1.NetworkPolicyPeer[] = [];
  if (config.webhook.enabled) from.push({ podSelector: { matchLabels: selectorLabels(config, 'webhook') } });
  if (allowedNamespaces.length > 0)
    from.push({
      namespaceSelector: {
        matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'In', values: allowedNamespaces }],
      },
    });
  return new k8s.networking.v1.NetworkPolicy(
    config.names.controller,
    {
      metadata: namespacedMeta(ctx, config.names.controller, 'controller'),
      spec: {
        podSelector: { matchLabels: selectorLabels(config, 'controller') },
        policyTypes: ['Ingress'],
        // No peer at all: an empty rule list admits nothing (a rule with `from: []` would admit all).
        ingress: from.length === 0 ? [] : [{ from, ports: ports.map((port) => ({ port, protocol: 'TCP' })) }],
      },
    },
    ctx.opts,
  );
}
