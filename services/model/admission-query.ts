import {
  isDns1123Label,
  isRecord,
  isStringRecord,
  withoutManagedFields,
  type Labels,
  type ResourceTarget,
} from './kubernetes';
import { LabelSelectorError, parseLabelSet } from './label-selector';
import { parseResourceTarget } from './resources';
import type { WorkloadDescriptor } from './workload';
import type { AdmissionCheckView } from './api';
import { withFields } from './object-copy';

// The admission query `GET /api/v1/constraints` (spec 4.2), encoded and decoded in one place: the
// webhook and `forewarn check` write it, the controller's route reads it back.

export const CONSTRAINT_LIST_PATH = '/api/v1/constraints';

export interface ConstraintQuery {
  namespace: string;
  /** `request.resource` of the review; null leaves the controller's resource filter off. */
  resource: ResourceTarget | null;
  /** `{}`: the object has no labels (only empty selectors match it); null: unknown, no filter. */
  labels: Labels | null;
  /**
   * The admitted object itself, so the controller can check its companions before it exists
   * (a Deployment naming a missing ClusterIssuer). Absent for objects without a name.
   */
  subject?: { kind: string; name: string; annotations: Record<string, string>; portNames: string[] };
  /**
   * The JSON body of `POST /api/v1/admission-check` for the admitted object (admissionCheckBody):
   * when set, the controller gives verdicts on the object instead of the list by labels.
   */
  checkBody?: string;
}

/**
 * A check body alone, without the label fields: a review the webhook forwards whole
 * (forwarded-review.ts), which it has not read far enough to know them.
 */
export interface CheckQuery {
  checkBody: string;
}

/** What the webhook asks the controller: the label query (with or without a check body), or a check. */
export type ControllerQuery = ConstraintQuery | CheckQuery;

/** The list query of a ControllerQuery without a check body; undefined when it has one. */
export function listQueryOf(query: ControllerQuery): ConstraintQuery | undefined {
  return query.checkBody === undefined && 'namespace' in query ? query : undefined;
}

/** DESIGN.md 7b: the verdicts on one object. */
export const ADMISSION_CHECK_PATH = '/api/v1/admission-check';
/** The controller's cap on admission-check bodies; larger objects fall back to the label query. */
export const MAX_CHECK_BODY_BYTES = 1024 * 1024;
/**
 * Several admission-check bodies in one request (docs/decisions.md, "Checks in flight together"):
 * newline-delimited, answered as `{"answers": [{"status", "body"}, ...]}` in the same order.
 */
export const ADMISSION_CHECKS_PATH = '/api/v1/admission-checks';
export const ADMISSION_CHECKS_CONTENT_TYPE = 'application/x-ndjson';
/** The most checks one batch may hold; the whole batch is within MAX_CHECK_BODY_BYTES. */
export const MAX_CHECKS_PER_BATCH = 16;

/** What the check body's object may leave out, taken from the review (apiVersion, kind, metadata.namespace). */
export interface CheckIdentity {
  apiVersion: string;
  kind: string;
  namespace: string;
}

/**
 * The fields of the admission-check body for an admitted object, or undefined when the label query
 * must be used: no object, or an operation other than CREATE/UPDATE. The webhook serialises them
 * (admissionCheckBody); the controller builds the same fields from a review the webhook forwarded
 * whole (forwarded-review.ts), so both paths judge the same object.
 */
export function admissionCheckFields(
  operation: string,
  admitted: Record<string, unknown> | null,
  oldObject: Record<string, unknown> | null,
  identity: CheckIdentity,
  view?: AdmissionCheckView,
  /** The review's `userInfo` (user name and groups), for rules that depend on who asks. */
  requester?: { username: string; groups: readonly string[] } | null,
): Record<string, unknown> | undefined {
  if (!admitted || (operation !== 'CREATE' && operation !== 'UPDATE')) return undefined;
  const trimmed = withoutManagedFields(admitted);
  const metadata = isRecord(trimmed.metadata) ? trimmed.metadata : {};
  const object =
    typeof trimmed.apiVersion === 'string' &&
    typeof trimmed.kind === 'string' &&
    metadata.namespace === identity.namespace
      ? trimmed
      : withFields(trimmed, {
          apiVersion: identity.apiVersion,
          kind: identity.kind,
          metadata: withFields(metadata, { namespace: identity.namespace }),
        });
  return {
    operation,
    ...(view === undefined ? {} : { view }),
    object,
    ...(operation === 'UPDATE' && oldObject ? { oldObject: withoutManagedFields(oldObject) } : {}),
    ...(requester ? { userInfo: { username: requester.username, groups: requester.groups } } : {}),
  };
}

/** Whether a body of this text fits under the controller's cap (characters never exceed bytes). */
export function fitsCheckBodyCap(text: string, reservedBytes = 0): boolean {
  const cap = MAX_CHECK_BODY_BYTES - reservedBytes;
  return text.length * 3 <= cap || Buffer.byteLength(text) <= cap;
}

/**
 * The admission-check body for an admitted object (admissionCheckFields as JSON), or undefined when
 * the label query must be used: no object, an operation other than CREATE/UPDATE, or a body over
 * the controller's 1 MiB cap. `view: 'warnings'` asks only for what becomes a warning.
 */
export function admissionCheckBody(...fields: Parameters<typeof admissionCheckFields>): string | undefined {
  const checked = admissionCheckFields(...fields);
  if (!checked) return undefined;
  const body = JSON.stringify(checked);
  return fitsCheckBodyCap(body) ? body : undefined;
}

/** `pods` for the core group, `apps/deployments` otherwise (the controller's `resource` parameter). */
export function formatResourceParameter(resource: ResourceTarget): string {
  return resource.group === '' ? resource.resource : `${resource.group}/${resource.resource}`;
}

/** `k=v,k2=v2`, keys sorted so equal label sets give equal URLs. */
export function formatLabelsParameter(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key]}`)
    .join(',');
}

/**
 * Path and query of the list request. `labels=` (empty) says the object has no labels, so a policy
 * selecting `role=x` does not apply to it; `labels` is omitted only when the object is unknown
 * (the controller then does not filter by workload selector).
 */
export function constraintQueryPath(basePath: string, query: ConstraintQuery): string {
  const parameters = new URLSearchParams({ namespace: query.namespace });
  if (query.resource) parameters.set('resource', formatResourceParameter(query.resource));
  if (query.labels !== null) parameters.set('labels', formatLabelsParameter(query.labels));
  if (query.subject) {
    parameters.set('kind', query.subject.kind);
    parameters.set('name', query.subject.name);
    if (Object.keys(query.subject.annotations).length > 0)
      parameters.set('annotations', JSON.stringify(query.subject.annotations));
    if (query.subject.portNames.length > 0) parameters.set('ports', query.subject.portNames.join(','));
  }
  return `${basePath.replace(/\/+$/, '')}${CONSTRAINT_LIST_PATH}?${parameters.toString()}`;
}

/** Reads one query parameter; undefined when absent. */
export type QueryParameters = (name: string) => string | undefined;

/** The filter part of a decoded query: what the constraint list is narrowed by. */
export interface DecodedConstraintFilter {
  namespace: string;
  resource: ResourceTarget | undefined;
  /** undefined: no selector filtering (the webhook sends no labels for an object without any). */
  labels: Record<string, string> | undefined;
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/** Namespace, resource and labels of a query, validated; an error names what is wrong. */
export function decodeConstraintFilter(parameter: QueryParameters): Decoded<DecodedConstraintFilter> {
  const namespace = parameter('namespace');
  if (!namespace) return { ok: false, error: 'query parameter namespace is required' };
  if (!isDns1123Label(namespace))
    return { ok: false, error: `invalid namespace ${JSON.stringify(namespace.slice(0, 100))}` };
  const resource = parameter('resource');
  if (resource !== undefined && !/^([a-z0-9.-]+\/)?[a-z0-9.-]+$/.test(resource))
    return { ok: false, error: 'resource must be written group/plural, e.g. apps/deployments' };
  const labels = parameter('labels');
  try {
    return {
      ok: true,
      value: {
        namespace,
        resource: resource === undefined ? undefined : parseResourceTarget(resource),
        labels: labels === undefined ? undefined : parseLabelSet(labels),
      },
    };
  } catch (failure) {
    if (failure instanceof LabelSelectorError) return { ok: false, error: failure.message };
    throw failure;
  }
}

const SUBJECT_ERROR = 'annotations must be a JSON object of strings; kind and name must be plain names';

function decodeAnnotations(text: string | undefined): Record<string, string> | undefined {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return isStringRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The admitted object, when the query describes it (`kind`, `name`, `annotations` as JSON, `ports`
 * as port names): companion checks then cover an object that is not in the cluster yet.
 */
export function decodeQuerySubject(
  parameter: QueryParameters,
  filter: DecodedConstraintFilter,
): Decoded<WorkloadDescriptor | undefined> {
  const kind = parameter('kind');
  const name = parameter('name');
  // Each one given is checked, even alone: a malformed value is a 400, never silently ignored.
  if (kind !== undefined && !/^[A-Za-z][A-Za-z0-9]{0,62}$/.test(kind))
    return { ok: false, error: SUBJECT_ERROR };
  if (name !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
    return { ok: false, error: SUBJECT_ERROR };
  const annotations = decodeAnnotations(parameter('annotations'));
  if (!annotations) return { ok: false, error: SUBJECT_ERROR };
  if (kind === undefined || name === undefined) return { ok: true, value: undefined };
  const ports = parameter('ports');
  const group = filter.resource?.group ?? '';
  return {
    ok: true,
    value: {
      kind,
      apiVersion: group ? `${group}/v1` : 'v1',
      name,
      namespace: filter.namespace,
      podLabels: filter.labels ?? {},
      annotations,
      portNames: ports ? ports.split(',').filter((port) => port !== '') : [],
    },
  };
}
