import { isRecord } from '../../../model/kubernetes';
import type { EvaluationGuard } from '../guard/evaluation-guard';

// Readers over an untyped pod (or pod template): every container list with its paths, and the
// effective security settings where the container's own override the pod's.

export type Fields = Record<string, unknown>;

export interface ContainerEntry {
  container: Fields;
  /** `spec.initContainers[0]`, relative to the pod. */
  path: string;
  /** `container "web"` / `init container "setup"`. */
  label: string;
}

export interface PodView {
  metadata: Fields;
  spec: Fields;
  /** The pod's own securityContext (`spec.securityContext`), `{}` when absent. */
  podSecurity: Fields;
  containers: ContainerEntry[];
  isWindows: boolean;
}

export function record(value: unknown): Fields {
  return isRecord(value) ? value : {};
}

export function records(value: unknown): Fields[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

const CONTAINER_LISTS: Array<[string, string]> = [
  ['initContainers', 'init container'],
  ['containers', 'container'],
  ['ephemeralContainers', 'ephemeral container'],
];

export function podView(pod: { metadata?: unknown; spec?: unknown }, guard?: EvaluationGuard): PodView {
  const spec = record(pod.spec);
  const containers = CONTAINER_LISTS.flatMap(([field, kind]) =>
    records(spec[field]).map((container, index) => {
      guard?.checkpoint();
      return {
        container,
        path: `spec.${field}[${index}]`,
        label: `${kind} "${typeof container.name === 'string' ? container.name : `#${index}`}"`,
      };
    }),
  );
  return {
    metadata: record(pod.metadata),
    spec,
    podSecurity: record(spec.securityContext),
    containers,
    isWindows: record(spec.os).name === 'windows',
  };
}

export function securityOf(entry: ContainerEntry): Fields {
  return record(entry.container.securityContext);
}
