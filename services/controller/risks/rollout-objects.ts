import { isRecord, type KubernetesObject } from '../../model/kubernetes';
import { podTemplateLocationOf } from '../../model/workload';
import type { AdmissionCheckRequest } from '../verdicts/admission-check';
import type { Evidence, Verdict } from '../verdicts/types';

// What a running workload's next rollout sends to admission (issue 35, found by the fidelity tier's
// comparison with the API server and gator, test/fidelity/risks-agreement.test.ts):
// - a pod controller is updated (a new template: `kubectl rollout restart`, a new image) and then
//   creates new Pods from its template: policies written for Pods only (a ValidatingAdmissionPolicy
//   on `pods`, a Gatekeeper constraint matching `Pod`, a Kyverno Pod rule without auto-generation)
//   reject those Pods, so the rollout fails though the controller's own update is admitted;
// - a bare Pod or a Job cannot be rolled out (their pod spec is immutable): they come back only as
//   new objects (a drained Pod re-created, a Job run again), so they are judged as a CREATE, which
//   also meets the policies that match CREATE alone.

/** Kinds whose next rollout is their re-creation. */
const RECREATED_KINDS = new Set(['Pod', 'Job']);

/** The controller of the Pods a workload's rollout creates (a Deployment's go through a ReplicaSet). */
const POD_OWNER: Record<string, { apiVersion: string; kind: string }> = {
  Deployment: { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
  CronJob: { apiVersion: 'batch/v1', kind: 'Job' },
};

/** The admission request of the workload's own part of its rollout. */
export function rolloutRequest(object: KubernetesObject): AdmissionCheckRequest {
  if (RECREATED_KINDS.has(object.kind ?? '')) return { object, operation: 'CREATE', rollout: true };
  return { object, oldObject: object, operation: 'UPDATE', rollout: true };
}

/**
 * The Pod a pod controller's rollout creates: its template's metadata and spec, in its namespace,
 * owned by the controller's Pod owner; undefined for a bare Pod or another kind.
 */
export function rolloutPodOf(object: KubernetesObject): KubernetesObject | undefined {
  if (object.kind === 'Pod') return undefined;
  const location = podTemplateLocationOf(object);
  if (!location) return undefined;
  const template = location.template;
  const metadata = isRecord(template.metadata) ? template.metadata : {};
  const name = String(object.metadata?.name);
  const owner = POD_OWNER[object.kind ?? ''] ?? { apiVersion: object.apiVersion, kind: object.kind };
  const podMetadata: Record<string, unknown> = {
    ...metadata,
    generateName: `${name}-`,
    name: `${name}-rollout`,
    namespace: object.metadata?.namespace,
    ownerReferences: [{ ...owner, name, controller: true }],
  };
  return { apiVersion: 'v1', kind: 'Pod', metadata: podMetadata, spec: template.spec } as KubernetesObject;
}

/** The path of the controller's pod template before a path in its Pod: `spec.template.` + path. */
export function templatePathOf(object: KubernetesObject): string {
  return podTemplateLocationOf(object)?.path.join('.') ?? '';
}

/** A verdict on the rollout's Pod as a verdict on its controller: paths in the template, Pods rejected. */
export function asControllerVerdict(verdict: Verdict, templatePath: string): Verdict {
  const evidence: Evidence[] = verdict.evidence.map((item) => ({
    ...item,
    path: item.path === '' ? templatePath : `${templatePath}.${item.path}`,
  }));
  return { ...verdict, evidence, ...(verdict.verdict === 'violates' ? { rejects: 'pods' as const } : {}) };
}
