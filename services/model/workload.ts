import { isRecord, isStringRecord, readPath, type KubernetesObject, type Labels } from './kubernetes';
import { podTemplateOf, workloadKindNamed } from './workload-kinds';

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

/** Where a pod's metadata and spec live in an object: the object itself for a Pod. */
export interface PodTemplateLocation {
  /** The pod template (or the Pod): `{metadata, spec}`. */
  template: Record<string, unknown>;
  /** Its path in the object, `[]` for a Pod, `['spec', 'template']` for a Deployment. */
  path: readonly string[];
}

/** The pods an object creates, described by its pod template and where it is; undefined for other kinds. */
export function podTemplateLocationOf(object: KubernetesObject): PodTemplateLocation | undefined {
  const workload = workloadKindNamed(object.kind ?? '');
  if (!workload) return undefined;
  const template = podTemplateOf(object, workload);
  return isRecord(template) ? { template, path: workload.podTemplatePath } : undefined;
}

/** Workload kinds, bare Pods and Ingresses are what reference companions. */
export function describeWorkload(
  object: KubernetesObject,
  defaultNamespace = 'default',
): WorkloadDescriptor | undefined {
  const kind = object.kind ?? '';
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const workload = workloadKindNamed(kind);
  if (!workload && kind !== 'Ingress') return undefined;
  const podTemplate = workload ? podTemplateOf(object, workload) : object;
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
