import type { ConstraintDraft } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import { describeWorkload, type WorkloadDescriptor } from '../../model/workload';
import { findingsForWorkload } from './rules';
import type { MissingResourceTracker } from './tracker';

// Companion checks for an object that is not (yet) in the cluster: the object being admitted by the
// webhook, or a manifest under `forewarn check`. No debounce: the question is "what would be missing".

export function prospectiveFindings(
  tracker: MissingResourceTracker,
  workload: WorkloadDescriptor,
): ConstraintDraft[] {
  return findingsForWorkload(workload, tracker.lookup()).map((finding) => finding.draft);
}

export function prospectiveFindingsForObject(
  tracker: MissingResourceTracker,
  object: KubernetesObject,
  namespace: string,
): ConstraintDraft[] {
  const workload = describeWorkload(object, namespace);
  return workload ? prospectiveFindings(tracker, workload) : [];
}
