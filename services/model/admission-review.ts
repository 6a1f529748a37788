import { isRecord, readPath, type Labels } from './kubernetes';
import { companionAnnotations, describeWorkload } from './workload';
import { workloadLabels } from './workload-kinds';
import { errorMessage } from './error-message';
import { admissionCheckBody, type CheckIdentity, type ConstraintQuery } from './admission-query';
import type { AdmissionCheckView } from './api';
import { withFields } from './object-copy';

// Reading an AdmissionReview (spec 4.5, DESIGN.md 7): pure functions from an untrusted request body
// to the query the webhook makes for it. A model fact both the webhook (which answers reviews) and
// `forewarn check --url` (which builds the review the API server would send) use. Nothing here
// throws on bad input: every malformed review maps to a value the webhook answers with
// `allowed: true` (rule B-1).

export const ADMISSION_V1 = 'admission.k8s.io/v1';
const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** What the webhook needs from an AdmissionReview request. */
export interface AdmissionRequestSummary {
  uid: string;
  /** The review's own apiVersion, echoed in the response as the API server requires. */
  reviewApiVersion: string;
  namespace: string;
  name: string | null;
  operation: string;
  resource: GroupVersionResource | null;
  kind: GroupVersionKind | null;
  /**
   * Labels the controller matches workload selectors against (see workloadLabels); `{}` for an
   * object without labels (it matches only empty selectors), null when the review carries no object.
   */
  labels: Labels | null;
  /** What companion checks need about the admitted object (missing issuers, monitors, ...). */
  companions: { annotations: Record<string, string>; portNames: string[] } | null;
  /** The admitted object and its previous version, for the controller's verdicts. */
  object: Record<string, unknown> | null;
  oldObject: Record<string, unknown> | null;
  /** `request.userInfo`: who makes the request (user name and groups); null when absent. */
  requester: { username: string; groups: string[] } | null;
}

export type ParsedReview =
  | { ok: true; request: AdmissionRequestSummary }
  /** `uid` is `''` when the review did not carry one we could read. */
  | { ok: false; uid: string; reviewApiVersion: string; problem: string };

/** `group` and `version` of a GroupVersionResource or GroupVersionKind; absent ones are ''. */
function groupVersionOf(value: Record<string, unknown>): { group: string; version: string } {
  return {
    group: typeof value.group === 'string' ? value.group : '',
    version: typeof value.version === 'string' ? value.version : '',
  };
}

function readGroupVersionResource(value: unknown): GroupVersionResource | null {
  if (!isRecord(value) || typeof value.resource !== 'string' || value.resource === '') return null;
  const { group, version } = groupVersionOf(value);
  return { group, version, resource: value.resource };
}

function readGroupVersionKind(value: unknown): GroupVersionKind | null {
  if (!isRecord(value) || typeof value.kind !== 'string' || value.kind === '') return null;
  const { group, version } = groupVersionOf(value);
  return { group, version, kind: value.kind };
}

/** `apps/v1` + `Deployment` from an object, for reviews that lack `request.kind`. */
function kindOfObject(object: Record<string, unknown>): GroupVersionKind | null {
  if (typeof object.kind !== 'string' || typeof object.apiVersion !== 'string') return null;
  const slash = object.apiVersion.indexOf('/');
  return {
    group: slash === -1 ? '' : object.apiVersion.slice(0, slash),
    version: slash === -1 ? object.apiVersion : object.apiVersion.slice(slash + 1),
    kind: object.kind,
  };
}

function reviewApiVersionOf(body: unknown): string {
  // A v1beta1 review must be answered in v1beta1; everything else gets v1.
  return isRecord(body) && body.apiVersion === ADMISSION_V1BETA1 ? ADMISSION_V1BETA1 : ADMISSION_V1;
}

/** A review's request without what only the label query needs (labels, companion hints). */
export type AdmissionRequestCore = Omit<AdmissionRequestSummary, 'labels' | 'companions'>;

type ReadRequest =
  | { ok: true; request: AdmissionRequestCore }
  | { ok: false; uid: string; reviewApiVersion: string; problem: string };

/**
 * The request of an AdmissionReview of unknown shape. `uidRequired: false` reads a review the
 * webhook forwarded with its uid blanked (forwarded-review.ts): the controller never echoes it.
 */
export function readAdmissionRequest(body: unknown, uidRequired = true): ReadRequest {
  const reviewApiVersion = reviewApiVersionOf(body);
  const failure = (uid: string, problem: string): ReadRequest => ({
    ok: false,
    uid,
    reviewApiVersion,
    problem,
  });
  if (!isRecord(body)) return failure('', 'body is not a JSON object');
  const request = body.request;
  // The uid is read first: every answer the API server can match, even to a malformed review,
  // must carry it, or the API server fails the call (and a failurePolicy Fail would block).
  const readableUid = isRecord(request) && typeof request.uid === 'string' ? request.uid : '';
  if (body.kind !== undefined && body.kind !== 'AdmissionReview') {
    return failure(
      readableUid,
      `kind is ${JSON.stringify(body.kind).slice(0, 100)}, expected AdmissionReview`,
    );
  }
  if (!isRecord(request)) return failure('', 'request is missing');
  if (readableUid === '' && uidRequired) return failure('', 'request.uid is missing');
  const uid = readableUid;

  // UPDATE and CREATE carry `object`; fall back to `oldObject` so a DELETE sent by a widened
  // registration still gets labels.
  const object = reviewedObjectOf(request);
  const namespace =
    typeof request.namespace === 'string' && request.namespace !== ''
      ? request.namespace
      : readPath(object, ['metadata', 'namespace']);
  if (typeof namespace !== 'string' || namespace === '') {
    return failure(uid, 'request has no namespace (cluster-scoped objects have no namespace constraints)');
  }
  const kind = readGroupVersionKind(request.kind) ?? (object ? kindOfObject(object) : null);
  const name =
    typeof request.name === 'string' && request.name !== ''
      ? request.name
      : readPath(object, ['metadata', 'name']);

  return {
    ok: true,
    request: {
      uid,
      reviewApiVersion,
      namespace,
      name: typeof name === 'string' && name !== '' ? name : null,
      operation: typeof request.operation === 'string' ? request.operation : '',
      resource: readGroupVersionResource(request.resource),
      kind,
      object: isRecord(request.object) ? request.object : null,
      oldObject: isRecord(request.oldObject) ? request.oldObject : null,
      requester: requesterOf(request.userInfo),
    },
  };
}

function reviewedObjectOf(request: Record<string, unknown>): Record<string, unknown> | null {
  if (isRecord(request.object)) return request.object;
  return isRecord(request.oldObject) ? request.oldObject : null;
}

/** Reads an AdmissionReview of unknown shape. */
export function parseAdmissionReview(body: unknown): ParsedReview {
  const read = readAdmissionRequest(body);
  if (!read.ok) return read;
  const { request } = read;
  const object = request.object ?? request.oldObject;
  return {
    ok: true,
    request: withFields(request, {
      labels: object ? workloadLabels(request.kind, object) : null,
      companions: companionHintsOf(object, request.kind),
    }),
  };
}

/** The review's userInfo: a user name, and the groups that are strings. */
function requesterOf(userInfo: unknown): AdmissionRequestSummary['requester'] {
  if (!isRecord(userInfo) || typeof userInfo.username !== 'string') return null;
  const groups = Array.isArray(userInfo.groups)
    ? userInfo.groups.filter((group): group is string => typeof group === 'string')
    : [];
  return { username: userInfo.username, groups };
}

/** Only the annotations companion rules read travel to the controller, with the port names. */
function companionHintsOf(
  object: Record<string, unknown> | null,
  kind: GroupVersionKind | null,
): AdmissionRequestSummary['companions'] {
  if (!object || !kind) return null;
  const workload = describeWorkload(withFields(object, { kind: kind.kind }));
  if (!workload) return null;
  return { annotations: companionAnnotations(workload.annotations), portNames: workload.portNames };
}

/**
 * The controller query for an admitted request: what the webhook sends (with `view: 'warnings'`,
 * the entries its warnings are made of), and `forewarn check --url` shows (every entry).
 */
export function constraintQueryOf(
  review: AdmissionRequestSummary,
  view?: AdmissionCheckView,
): ConstraintQuery {
  return {
    namespace: review.namespace,
    resource: review.resource,
    labels: review.labels,
    // Companion hints travel with the kind and name of the object.
    subject:
      review.companions && review.kind && review.name
        ? { kind: review.kind.kind, name: review.name, ...review.companions }
        : undefined,
    checkBody: review.kind
      ? admissionCheckBody(
          review.operation,
          review.object,
          review.oldObject,
          checkIdentityOf(review, review.kind),
          view,
          review.requester,
        )
      : undefined,
  };
}

/** The check body's identity fields, from the review (its kind and namespace). */
export function checkIdentityOf(review: AdmissionRequestCore, kind: GroupVersionKind): CheckIdentity {
  return {
    apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version,
    kind: kind.kind,
    namespace: review.namespace,
  };
}

/** JSON text to a parsed review; text that is not JSON is a malformed review, not an exception. */
export function parseAdmissionReviewText(text: string): ParsedReview {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      uid: '',
      reviewApiVersion: ADMISSION_V1,
      problem: `body is not JSON: ${errorMessage(error)}`,
    };
  }
  return parseAdmissionReview(body);
}
