import type { DetailLevel } from '../../model/api';
import type { Constraint, ConstraintDraft } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import type { ConstraintIndex } from '../index/constraint-index';
import {
  admissionCheckCandidates,
  buildAdmissionCheck,
  type AdmissionCheckRequest,
} from '../verdicts/admission-check';
import type { ConstraintLookup } from './manifest-check';
import { NO_EXISTING_OBJECTS, operationOfApply, type FindExistingObject } from '../verdicts/existing-objects';

// Answers `check` queries from an index in this process (the MCP server's live index, or the index
// `forewarn check --manifests DIR` builds), exactly as `POST /api/v1/admission-check` would.

/**
 * Companion checks for an object that is not in the index yet (MissingResource findings such as
 * "references a ClusterIssuer that does not exist"). MissingResource constraints already in the
 * index for the namespace need no hook: they come back from the index like every other constraint.
 */
export type FindMissingCompanions = (
  object: KubernetesObject,
  namespace: string,
) => readonly ConstraintDraft[];

export const NO_MISSING_COMPANIONS: FindMissingCompanions = () => [];

export function indexLookup(
  index: ConstraintIndex,
  findMissingCompanions: FindMissingCompanions = NO_MISSING_COMPANIONS,
  level: DetailLevel = 'full',
  /**
   * Which constraints the caller may read the source of (issue 24, the MCP `check` tool): those are
   * rendered at `full`. Asked only below `full`, about the constraints the check may show.
   */
  readable?: (constraints: readonly Constraint[]) => Promise<ReadonlySet<Constraint>>,
  /** The stored object an apply would update (existing-objects.ts); none: every object is created. */
  findExisting: FindExistingObject = NO_EXISTING_OBJECTS,
): ConstraintLookup {
  // The controller's admission check itself: the same list, with verdicts on the object, rendered
  // for the viewer's level as the HTTP route renders it for the same caller. An object that exists
  // is checked as the UPDATE the API server will see.
  return async (query) => {
    const object = query.clusterScoped
      ? query.object
      : { ...query.object, metadata: { ...query.object.metadata, namespace: query.namespace } };
    const request: AdmissionCheckRequest = {
      object,
      ...(await operationOfApply(object, findExisting)),
      ...(query.clusterScoped ? { clusterScoped: true } : {}),
    };
    const prospective = query.clusterScoped ? [] : findMissingCompanions(query.object, query.namespace);
    const candidates = readable && level !== 'full' ? admissionCheckCandidates(index, request) : [];
    const allowed: ReadonlySet<ConstraintDraft> =
      readable && candidates.length > 0 ? await readable(candidates) : new Set();
    const levelOf =
      allowed.size > 0
        ? (constraint: ConstraintDraft) => (allowed.has(constraint) ? 'full' : level)
        : undefined;
    return buildAdmissionCheck(index, request, {
      prospective,
      viewer: { level },
      ...(levelOf ? { levelOf } : {}),
    }).constraints;
  };
}
