import {
  readPath,
  stringLabels,
  type KubernetesObject,
  type Labels,
  type ResourceTarget,
} from './kubernetes';

// The workload kinds, once: which group and plural each has, where its pods' template lives, whether
// the controller lists it in `affected_workloads` and whether the webhook is registered for it. The
// controller's ingestion, watches and RBAC, the webhook's labels and registration, the companion
// inventory and the views all read this table.
//
// `affected_workloads` names what a developer writes: Deployments, StatefulSets, DaemonSets, Jobs,
// CronJobs and bare Pods. What a controller creates is represented by its owner (a Pod or Job with an
// owner is skipped); ReplicaSets are not listed, as nearly all belong to a Deployment and watching
// every revision's ReplicaSet would cost memory for nothing. The webhook still warns on ReplicaSets.

export interface WorkloadKind {
  group: string;
  kind: string;
  plural: string;
  /** Versions the controller's watch tries, in order. */
  versions: readonly string[];
  /** Path from the object to its pod template; empty when the object is itself the pod. */
  podTemplatePath: readonly string[];
  /** Watched by the controller and named in `affected_workloads`. */
  listed: boolean;
  /** An object of this kind with an owner is represented by that owner (Pods of a ReplicaSet, Jobs of a CronJob). */
  representedByOwner: boolean;
  /** The webhook is registered for it (spec 4.4). */
  admitted: boolean;
  /**
   * Where the object says how many pods it runs at once (`spec.replicas`, a Job's parallelism), which
   * defaults to 1; absent: one pod (a Pod).
   */
  podCountPath?: readonly string[];
  /** Runs one pod per node (a DaemonSet): the count is per node, the nodes are not known here. */
  podsPerNode?: boolean;
  /** A pod controller Kyverno's auto-generation extends Pod rules to by default. */
  kyvernoAutogen?: boolean;
}

const TEMPLATE = ['spec', 'template'] as const;
const REPLICAS = ['spec', 'replicas'] as const;

export const WORKLOAD_KINDS: readonly WorkloadKind[] = [
  {
    group: '',
    kind: 'Pod',
    plural: 'pods',
    versions: ['v1'],
    podTemplatePath: [],
    listed: true,
    representedByOwner: true,
    admitted: true,
  },
  ...(['Deployment', 'StatefulSet', 'DaemonSet'] as const).map((kind) => ({
    group: 'apps',
    kind,
    plural: `${kind.toLowerCase()}s`,
    versions: ['v1'],
    podTemplatePath: TEMPLATE,
    listed: true,
    representedByOwner: false,
    admitted: true,
    ...(kind === 'DaemonSet' ? { podsPerNode: true } : { podCountPath: REPLICAS }),
    kyvernoAutogen: true,
  })),
  {
    group: 'apps',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    versions: ['v1'],
    podTemplatePath: TEMPLATE,
    listed: false,
    representedByOwner: true,
    admitted: true,
    podCountPath: REPLICAS,
    kyvernoAutogen: true,
  },
  {
    group: 'batch',
    kind: 'Job',
    plural: 'jobs',
    versions: ['v1'],
    podTemplatePath: TEMPLATE,
    listed: true,
    representedByOwner: true,
    admitted: true,
    podCountPath: ['spec', 'parallelism'],
    kyvernoAutogen: true,
  },
  {
    group: 'batch',
    kind: 'CronJob',
    plural: 'cronjobs',
    versions: ['v1', 'v1beta1'],
    podTemplatePath: ['spec', 'jobTemplate', 'spec', 'template'],
    listed: true,
    representedByOwner: false,
    admitted: true,
    podCountPath: ['spec', 'jobTemplate', 'spec', 'parallelism'],
    kyvernoAutogen: true,
  },
  // Not registered by default, but a widened registration still gets its pods' labels. Kyverno 1.19
  // auto-generates Pod rules for it too (pkg/autogen/v1: PodControllers), so `check` lists them.
  {
    group: '',
    kind: 'ReplicationController',
    plural: 'replicationcontrollers',
    versions: ['v1'],
    podTemplatePath: TEMPLATE,
    listed: false,
    representedByOwner: true,
    admitted: false,
    podCountPath: REPLICAS,
    kyvernoAutogen: true,
  },
];

/** The pod controllers Kyverno's auto-generation covers by default, in table order. */
export const KYVERNO_AUTOGEN_KINDS: readonly WorkloadKind[] = WORKLOAD_KINDS.filter(
  (entry) => entry.kyvernoAutogen === true,
);

/** How many pods an object of a workload kind asks for at once (its pod-count field, default 1). */
export function podCountOf(object: KubernetesObject): number {
  const entry = workloadKindNamed(object.kind ?? '');
  if (!entry?.podCountPath) return 1;
  const count = readPath(object, entry.podCountPath);
  return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : 1;
}

const BY_GROUP_KIND = new Map(WORKLOAD_KINDS.map((entry) => [`${entry.group}/${entry.kind}`, entry]));
const BY_KIND = new Map(WORKLOAD_KINDS.map((entry) => [entry.kind, entry]));

export function workloadKind(group: string, kind: string): WorkloadKind | undefined {
  return BY_GROUP_KIND.get(`${group}/${kind}`);
}

/** By kind alone, for manifests and policy engines that name a kind without its group. */
export function workloadKindNamed(kind: string): WorkloadKind | undefined {
  return BY_KIND.get(kind);
}

/** Workload resources the webhook is registered for, in table order. */
export const ADMITTED_WORKLOAD_RESOURCES: readonly ResourceTarget[] = WORKLOAD_KINDS.filter(
  (entry) => entry.admitted,
).map((entry) => ({ group: entry.group, resource: entry.plural }));

/** Kinds the controller watches to name affected workloads. */
export const LISTED_WORKLOAD_KINDS: readonly WorkloadKind[] = WORKLOAD_KINDS.filter((entry) => entry.listed);

/** The pod template of a workload object (the object itself for a Pod). */
export function podTemplateOf(object: unknown, entry: Pick<WorkloadKind, 'podTemplatePath'>): unknown {
  return readPath(object, entry.podTemplatePath);
}

/**
 * The labels selectors are evaluated against: the pod template's labels for a workload (policies
 * select pods, not their controller), the object's own labels otherwise (Pods, Services, ConfigMaps).
 */
export function workloadLabels(kind: { group: string; kind: string } | null, object: unknown): Labels {
  const entry = kind ? workloadKind(kind.group, kind.kind) : undefined;
  return stringLabels(readPath(entry ? podTemplateOf(object, entry) : object, ['metadata', 'labels']));
}

/** Whether a controller-created copy stands for its owner rather than for itself. */
export function isRepresentedByOwner(entry: WorkloadKind, object: KubernetesObject): boolean {
  const owners = readPath(object, ['metadata', 'ownerReferences']);
  return entry.representedByOwner && Array.isArray(owners) && owners.length > 0;
}
