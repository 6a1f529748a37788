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
): ConstraintLookup {
  // The controller's admission check itself: the same list, with verdicts on the object, rendered
  // for the viewer's level as the HTTP route renders it for the same caller.
  return async (query) => {
    const request: AdmissionCheckRequest = query.clusterScoped
      ? { object: query.object, operation: 'CREATE', clusterScoped: true }
      : {
          object: { ...query.object, metadata: { ...query.object.metadata, namespace: query.namespace } },
          operation: 'CREATE',
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
