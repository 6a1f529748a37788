import { isRecord, isStringRecord, type KubernetesObject, type Labels } from './kubernetes';

// What companion checks need to know about a workload (or Ingress): its pod labels, what it
// references through annotations, and the ports it exposes. Shared by the controller's inventory
// and the webhook, which describes the object being admitted.

/** A workload as companion rules need it: what it references and exposes. */
export interface WorkloadDescriptor {
  kind: string;
  apiVersion: string;
  name: string;
  namespace: string;
  podLabels: Labels;
  annotations: Labels;
  /** Names of the container ports (to find `metrics` / `http-metrics`). */
  portNames: string[];
}

const WORKLOAD_TEMPLATE_PATHS: Record<string, string[]> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

function readPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** Where a pod's metadata and spec live in an object: the object itself for a Pod. */
export interface PodTemplateLocation {
  /** The pod template (or the Pod): `{metadata, spec}`. */
  template: Record<string, unknown>;
  /** Its path in the object, `[]` for a Pod, `['spec', 'template']` for a Deployment. */
  path: readonly string[];
}

/** The pods an object creates, described by its pod template; undefined for other kinds. */
export function podTemplateOf(object: KubernetesObject): PodTemplateLocation | undefined {
  if (object.kind === 'Pod') return { template: object, path: [] };
  const path = WORKLOAD_TEMPLATE_PATHS[object.kind ?? ''];
  if (!path) return undefined;
  const template = readPath(object, path);
  return isRecord(template) ? { template, path } : undefined;
}

/** Workload kinds, bare Pods and Ingresses are what reference companions. */
export function describeWorkload(
  object: KubernetesObject,
  defaultNamespace = 'default',
): WorkloadDescriptor | undefined {
  const kind = object.kind ?? '';
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const templatePath = WORKLOAD_TEMPLATE_PATHS[kind];
  if (!templatePath && kind !== 'Pod' && kind !== 'Ingress') return undefined;
  const podTemplate = templatePath ? readPath(object, templatePath) : object;
  const podLabels = readPath(podTemplate, ['metadata', 'labels']);
  const podAnnotations = readPath(podTemplate, ['metadata', 'annotations']);
  const containers = readPath(podTemplate, ['spec', 'containers']);
  const portNames: string[] = [];
  if (Array.isArray(containers))
    for (const container of containers) {
      const ports = readPath(container, ['ports']);
      if (Array.isArray(ports))
        for (const port of ports)
          if (isRecord(port) && typeof port.name === 'string') portNames.push(port.name);
    }
  const ownAnnotations = isStringRecord(object.metadata?.annotations) ? object.metadata.annotations : {};
  return {
    kind,
    apiVersion: object.apiVersion ?? '',
    name,
    namespace: typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : defaultNamespace,
    podLabels: isStringRecord(podLabels) ? podLabels : {},
    // The workload's own annotations win over its pod template's (cert-manager reads the object's).
    annotations: { ...(isStringRecord(podAnnotations) ? podAnnotations : {}), ...ownAnnotations },
    portNames,
  };
}

/** Annotation prefixes companion rules read; the webhook forwards only these. */
export const COMPANION_ANNOTATION_PREFIXES = ['cert-manager.io/', 'forewarn.io/'] as const;

export function companionAnnotations(annotations: Labels): Record<string, string> {
  return Object.fromEntries(
    Object.entries(annotations).filter(([key]) =>
      COMPANION_ANNOTATION_PREFIXES.some((prefix) => key.startsWith(prefix)),
    ),
  );
}
