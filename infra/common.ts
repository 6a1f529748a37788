// Pieces shared by the controller and the webhook: labels, metadata, pod hardening and scheduling,
// and the ServiceAccount, container and Deployment each process runs as.
import * as k8s from '@pulumi/kubernetes';
import type * as pulumi from '@pulumi/pulumi';
import type { ResolvedForewarn, ResolvedResources } from './resolve';

type Container = k8s.types.input.core.v1.Container;
type ContainerPort = k8s.types.input.core.v1.ContainerPort;
type ObjectMeta = k8s.types.input.meta.v1.ObjectMeta;
type ServicePort = k8s.types.input.core.v1.ServicePort;
type PodSpec = k8s.types.input.core.v1.PodSpec;
type Probe = k8s.types.input.core.v1.Probe;
type SecurityContext = k8s.types.input.core.v1.SecurityContext;
type Volume = k8s.types.input.core.v1.Volume;
type VolumeMount = k8s.types.input.core.v1.VolumeMount;

/** The two processes Forewarn deploys; the value is the `app.kubernetes.io/component` label. */
export type Part = 'controller' | 'webhook';

/**
 * The uid and gid the image's `node` user has in the official Node images. Pods set them explicitly so
 * `runAsNonRoot` can be verified by the kubelet even for an image whose USER is a name.
 */
export const RUN_AS_USER = 1000;

/** Everything a builder needs: the resolved arguments, the namespace, the parent for resource options. */
export interface BuildContext {
  config: ResolvedForewarn;
  /** The namespace name as an output of the Namespace resource (so objects wait for it) or a plain name. */
  namespace: pulumi.Input<string>;
  opts: pulumi.CustomResourceOptions;
}

/** Labels that select a part's pods. Never changes after the first deploy (selectors are immutable). */
export function selectorLabels(config: ResolvedForewarn, part: Part): { [key: string]: string } {
  return {
    'app.kubernetes.io/name': 'forewarn',
    'app.kubernetes.io/instance': config.name,
    'app.kubernetes.io/component': part,
  };
}

/** The standard labels plus the user's labels; the standard ones win so selectors keep matching. */
export function objectLabels(config: ResolvedForewarn, part?: Part): { [key: string]: string } {
  const standard: { [key: string]: string } = {
    'app.kubernetes.io/name': 'forewarn',
    'app.kubernetes.io/instance': config.name,
    'app.kubernetes.io/part-of': 'forewarn',
    'app.kubernetes.io/managed-by': 'pulumi',
  };
  if (part) {
    standard['app.kubernetes.io/component'] = part;
  }
  return { ...config.labels, ...standard };
}

/** metadata of a namespaced object of a part. */
export function namespacedMeta(ctx: BuildContext, name: string, part?: Part): ObjectMeta {
  return {
    name,
    namespace: ctx.namespace,
    labels: objectLabels(ctx.config, part),
    ...annotationsOf(ctx),
  };
}

/** metadata of a cluster-scoped object of a part. */
export function clusterMeta(ctx: BuildContext, name: string, part?: Part): ObjectMeta {
  return { name, labels: objectLabels(ctx.config, part), ...annotationsOf(ctx) };
}

/**
 * The configured annotations, or no `annotations` field at all: the API server stores an empty map as
 * absent, so an `annotations: {}` in the program is a difference on every preview after an awaited
 * `pulumi up` (seen on the webhook's TLS Secret, docs/e2e.md).
 */
function annotationsOf(ctx: BuildContext): Pick<ObjectMeta, 'annotations'> {
  const annotations = { ...ctx.config.annotations };
  return Object.keys(annotations).length > 0 ? { annotations } : {};
}

/** Container hardening of both processes: non-root, read-only root filesystem, no capabilities. */
function containerSecurityContext(): SecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: RUN_AS_USER,
    runAsGroup: RUN_AS_USER,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    privileged: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** Pod-level fields shared by both processes: security, scheduling, pull secrets, volumes. */
export function podSpecBase(ctx: BuildContext, extraVolumes: Volume[] = []): Omit<PodSpec, 'containers'> {
  const { config } = ctx;
  return {
    securityContext: {
      runAsNonRoot: true,
      runAsUser: RUN_AS_USER,
      runAsGroup: RUN_AS_USER,
      fsGroup: RUN_AS_USER,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    nodeSelector: Object.keys(config.nodeSelector).length > 0 ? config.nodeSelector : undefined,
    tolerations: config.tolerations.length > 0 ? config.tolerations : undefined,
    priorityClassName: config.priorityClassName,
    imagePullSecrets:
      config.imagePullSecrets.length > 0 ? config.imagePullSecrets.map((name) => ({ name })) : undefined,
    // Node writes temporary files (and npm its cache) under /tmp; the root filesystem is read-only.
    volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }, ...extraVolumes],
  };
}

/** The /tmp mount matching podSpecBase's `tmp` volume. */
const TMP_MOUNT = { name: 'tmp', mountPath: '/tmp' };

function containerResources(resources: ResolvedResources): k8s.types.input.core.v1.ResourceRequirements {
  return {
    requests: { cpu: resources.requests.cpu, memory: resources.requests.memory },
    limits: { cpu: resources.limits.cpu, memory: resources.limits.memory },
  };
}

/** A part's ServiceAccount, named like the part's Deployment. */
export function createServiceAccount(
  ctx: BuildContext,
  name: string,
  part: Part,
): k8s.core.v1.ServiceAccount {
  return new k8s.core.v1.ServiceAccount(name, { metadata: namespacedMeta(ctx, name, part) }, ctx.opts);
}

/** What sets one process's container apart; image, pull policy, hardening, probes and /tmp are shared. */
export interface ProcessContainer {
  command: string[];
  args: pulumi.Input<string[]>;
  ports: ContainerPort[];
  /** The named port `/healthz` and `/readyz` are asked on, and its scheme when it serves only HTTPS. */
  probePort: string;
  probeScheme?: 'HTTPS';
  resources: ResolvedResources;
  /** Mounts besides /tmp. */
  extraMounts?: VolumeMount[];
  /** Environment variables of the process. */
  env?: Array<{ name: string; value: string }>;
}

function httpProbe(path: string, container: ProcessContainer, seconds: number): Probe {
  const port = container.probePort;
  return {
    httpGet: container.probeScheme ? { path, port, scheme: container.probeScheme } : { path, port },
    initialDelaySeconds: seconds,
    periodSeconds: seconds,
  };
}

/** The container of a part. Both processes are not ready until they can answer (the controller: its first sync). */
export function processContainer(ctx: BuildContext, part: Part, container: ProcessContainer): Container {
  const { config } = ctx;
  return {
    name: part,
    image: config.images[part],
    imagePullPolicy: config.images.pullPolicy,
    command: container.command,
    args: container.args,
    ports: container.ports,
    livenessProbe: httpProbe('/healthz', container, 10),
    readinessProbe: httpProbe('/readyz', container, 5),
    resources: containerResources(container.resources),
    securityContext: containerSecurityContext(),
    volumeMounts: [TMP_MOUNT, ...(container.extraMounts ?? [])],
    ...(container.env ? { env: container.env } : {}),
  };
}

/** What sets one process's pods apart. */
export interface ProcessPods {
  replicas: number;
  serviceAccount: k8s.core.v1.ServiceAccount;
  container: Container;
  /** Volumes besides /tmp. */
  extraVolumes?: Volume[];
  /** Pod fields only this process sets. */
  podFields?: Omit<PodSpec, 'containers' | 'volumes' | 'serviceAccountName'>;
}

/** A part's Deployment, started once `dependsOn` exists. */
export function createProcessDeployment(
  ctx: BuildContext,
  name: string,
  part: Part,
  pods: ProcessPods,
  dependsOn: pulumi.Input<pulumi.Resource>[],
): k8s.apps.v1.Deployment {
  const { config } = ctx;
  return new k8s.apps.v1.Deployment(
    name,
    {
      metadata: namespacedMeta(ctx, name, part),
      spec: {
        replicas: pods.replicas,
        selector: { matchLabels: selectorLabels(config, part) },
        template: {
          metadata: { labels: objectLabels(config, part) },
          spec: {
            ...podSpecBase(ctx, pods.extraVolumes),
            serviceAccountName: pods.serviceAccount.metadata.name,
            ...pods.podFields,
            containers: [pods.container],
          },
        },
      },
    },
    { ...ctx.opts, dependsOn },
  );
}

/** A part's ClusterIP Service in front of its pods. */
export function createProcessService(
  ctx: BuildContext,
  name: string,
  part: Part,
  ports: ServicePort[],
): k8s.core.v1.Service {
  return new k8s.core.v1.Service(
    name,
    {
      metadata: namespacedMeta(ctx, name, part),
      spec: { type: 'ClusterIP', selector: selectorLabels(ctx.config, part), ports },
    },
    ctx.opts,
  );
}
