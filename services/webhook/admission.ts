import { type ListedConstraint, type Severity, type VerdictName } from '../model/api';
import { isRecord, isStringRecord, type Labels } from '../model/kubernetes';
import { companionAnnotations, describeWorkload } from '../model/workload';

// The admission core (spec 4.5, DESIGN.md 7): pure functions from an untrusted request body to the
// query the webhook makes, and from the controller's answer to the AdmissionReview it returns.
// Nothing here throws on bad input: every malformed review maps to a value the handler answers
// with `allowed: true` (rule B-1).

export const ADMISSION_V1 = 'admission.k8s.io/v1';
const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';

/** The API server truncates longer warnings (256 runes); we shorten first so the ellipsis is ours. */
export const MAX_WARNING_LENGTH = 256;
const ELLIPSIS = '…';

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
  /** Labels the controller matches workload selectors against (see workloadLabels). */
  labels: Labels;
  /** What companion checks need about the admitted object (missing issuers, monitors, ...). */
  companions: { annotations: Record<string, string>; portNames: string[] } | null;
  /** The admitted object and its previous version, for the controller's verdicts. */
  object: Record<string, unknown> | null;
  oldObject: Record<string, unknown> | null;
}

export type ParsedReview =
  | { ok: true; request: AdmissionRequestSummary }
  /** `uid` is `''` when the review did not carry one we could read. */
  | { ok: false; uid: string; reviewApiVersion: string; problem: string };

function readGroupVersionResource(value: unknown): GroupVersionResource | null {
  if (!isRecord(value) || typeof value.resource !== 'string' || value.resource === '') return null;
  return {
    group: typeof value.group === 'string' ? value.group : '',
    version: typeof value.version === 'string' ? value.version : '',
    resource: value.resource,
  };
}

function readGroupVersionKind(value: unknown): GroupVersionKind | null {
  if (!isRecord(value) || typeof value.kind !== 'string' || value.kind === '') return null;
  return {
    group: typeof value.group === 'string' ? value.group : '',
    version: typeof value.version === 'string' ? value.version : '',
    kind: value.kind,
  };
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

function stringLabels(value: unknown): Labels {
  if (!isRecord(value)) return {};
  if (isStringRecord(value)) return value;
  // Keep the string entries of a partly malformed map rather than losing all of them.
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function path(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

// Controllers whose pods are described by `spec.template`: policies select the pods, so the pods'
// labels are what the controller must match, not the controller object's own labels.
const POD_TEMPLATE_KINDS = new Set([
  'apps/Deployment',
  'apps/StatefulSet',
  'apps/DaemonSet',
  'apps/ReplicaSet',
  'batch/Job',
  '/ReplicationController',
]);

/**
 * The labels selectors are evaluated against: pod-template labels for workload controllers,
 * `spec.jobTemplate.spec.template.metadata.labels` for CronJobs, the object's own labels otherwise
 * (Pods, Services, ConfigMaps).
 */
export function workloadLabels(
  kind: Pick<GroupVersionKind, 'group' | 'kind'> | null,
  object: unknown,
): Labels {
  const key = kind ? `${kind.group}/${kind.kind}` : '';
  if (POD_TEMPLATE_KINDS.has(key))
    return stringLabels(path(object, 'spec', 'template', 'metadata', 'labels'));
  if (key === 'batch/CronJob') {
    return stringLabels(path(object, 'spec', 'jobTemplate', 'spec', 'template', 'metadata', 'labels'));
  }
  return stringLabels(path(object, 'metadata', 'labels'));
}

function reviewApiVersionOf(body: unknown): string {
  // A v1beta1 review must be answered in v1beta1; everything else gets v1.
  return isRecord(body) && body.apiVersion === ADMISSION_V1BETA1 ? ADMISSION_V1BETA1 : ADMISSION_V1;
}

/** Reads an AdmissionReview of unknown shape. */
export function parseAdmissionReview(body: unknown): ParsedReview {
  const reviewApiVersion = reviewApiVersionOf(body);
  const failure = (uid: string, problem: string): ParsedReview => ({
    ok: false,
    uid,
    reviewApiVersion,
    problem,
  });
  if (!isRecord(body)) return failure('', 'body is not a JSON object');
  if (body.kind !== undefined && body.kind !== 'AdmissionReview') {
    return failure('', `kind is ${JSON.stringify(body.kind)}, expected AdmissionReview`);
  }
  const request = body.request;
  if (!isRecord(request)) return failure('', 'request is missing');
  if (typeof request.uid !== 'string' || request.uid === '') return failure('', 'request.uid is missing');
  const uid = request.uid;

  // UPDATE and CREATE carry `object`; fall back to `oldObject` so a DELETE sent by a widened
  // registration still gets labels.
  const object = isRecord(request.object)
    ? request.object
    : isRecord(request.oldObject)
      ? request.oldObject
      : null;
  const namespace =
    typeof request.namespace === 'string' && request.namespace !== ''
      ? request.namespace
      : path(object, 'metadata', 'namespace');
  if (typeof namespace !== 'string' || namespace === '') {
    return failure(uid, 'request has no namespace (cluster-scoped objects have no namespace constraints)');
  }
  const kind = readGroupVersionKind(request.kind) ?? (object ? kindOfObject(object) : null);
  const name =
    typeof request.name === 'string' && request.name !== '' ? request.name : path(object, 'metadata', 'name');

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
      labels: workloadLabels(kind, object),
      companions: companionHintsOf(object, kind),
      object: isRecord(request.object) ? request.object : null,
      oldObject: isRecord(request.oldObject) ? request.oldObject : null,
    },
  };
}

/** Only the annotations companion rules read travel to the controller, with the port names. */
function companionHintsOf(
  object: Record<string, unknown> | null,
  kind: GroupVersionKind | null,
): AdmissionRequestSummary['companions'] {
  if (!object || !kind) return null;
  const workload = describeWorkload({ ...object, kind: kind.kind });
  if (!workload) return null;
  return { annotations: companionAnnotations(workload.annotations), portNames: workload.portNames };
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
      problem: `body is not JSON: ${(error as Error).message}`,
    };
  }
  return parseAdmissionReview(body);
}

// The API server serialises `request` with `uid` as its first field. A review too large to read
// whole can still be answered with its uid when that prefix arrived.
const LEADING_UID = /"request"\s*:\s*\{\s*"uid"\s*:\s*"([A-Za-z0-9._:-]{1,128})"/;

/** The uid of a review from the first bytes of its text, when it is where the API server puts it. */
export function uidFromReviewPrefix(prefix: string): string {
  return LEADING_UID.exec(prefix)?.[1] ?? '';
}

/** The inputs of one warning: a subset of the controller's ListedConstraint, with its verdict if any. */
export type WarningSource = Pick<ListedConstraint, 'severity' | 'summary' | 'remediationHint'> & {
  verdict?: VerdictName;
};

const SEVERITY_PREFIX: Record<Severity, string | null> = {
  Critical: '[CRITICAL]',
  Warning: '[WARNING]',
  Info: null,
};

// Printable ASCII words separated by single spaces: nothing for singleLine to change. Most
// summaries look like this, and skipping the two Unicode-aware replacements for them took the
// warning formatting from ~10% to ~1% of the webhook's CPU per review (docs/benchmarks.md).
const PLAIN_SINGLE_LINE = /^[!-~]+(?: [!-~]+)*$/;

// Warnings travel in an HTTP `Warning` header: control characters (newlines from a multi-line
// annotation, tabs) would corrupt it, so they become spaces.
function singleLine(text: string): string {
  if (PLAIN_SINGLE_LINE.test(text)) return text;
  return text
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Shortens to at most `max` characters (code points, as the API server counts runes), ending in `…`. */
export function shortenWarning(text: string, max = MAX_WARNING_LENGTH): string {
  // A string never has more code points than UTF-16 units: short ones need no counting.
  if (text.length <= max) return text;
  // Count code points in place (a surrogate pair is one) instead of splitting the text into an
  // array of them: long warnings are common, and the array was ~8% of the webhook's CPU per review.
  let index = 0;
  let cut = 0;
  for (let counted = 0; index < text.length; counted++) {
    if (counted === max - 1) cut = index;
    if (counted === max) return `${text.slice(0, cut).trimEnd()}${ELLIPSIS}`;
    index += (text.codePointAt(index) ?? 0) > 0xffff ? 2 : 1;
  }
  return text;
}

/** `[CRITICAL] <summary> - <remediation hint>`; null for Info, which never becomes a warning. */
export function formatWarning(constraint: WarningSource): string | null {
  const prefix = SEVERITY_PREFIX[constraint.severity];
  if (!prefix) return null;
  const summary = singleLine(constraint.summary);
  const hint = singleLine(constraint.remediationHint);
  // A constraint without a hint still warns; a dangling " - " would read as a formatting bug.
  return shortenWarning(hint ? `${prefix} ${summary} - ${hint}` : `${prefix} ${summary}`);
}

/**
 * Warning and Critical constraints as warnings, no duplicates: violations of the object first
 * (DESIGN.md 7b), then the rest; Critical before Warning within each; a `passes` verdict gives none.
 */
export function buildWarnings(constraints: readonly WarningSource[]): string[] {
  const violations = constraints.filter((constraint) => constraint.verdict === 'violates');
  const others = constraints.filter(
    (constraint) => constraint.verdict !== 'violates' && constraint.verdict !== 'passes',
  );
  const ordered = [violations, others].flatMap((group) => [
    ...group.filter((constraint) => constraint.severity === 'Critical'),
    ...group.filter((constraint) => constraint.severity === 'Warning'),
  ]);
  const warnings = ordered.map(formatWarning).filter((warning): warning is string => warning !== null);
  return [...new Set(warnings)];
}

export interface AdmissionReviewResponse {
  apiVersion: string;
  kind: 'AdmissionReview';
  response: { uid: string; allowed: true; warnings: string[] };
}

/** The only answer the webhook ever gives: allowed, with warnings (rule B-1). */
export function buildAdmissionResponse(
  uid: string,
  warnings: readonly string[] = [],
  reviewApiVersion: string = ADMISSION_V1,
): AdmissionReviewResponse {
  return {
    apiVersion: reviewApiVersion,
    kind: 'AdmissionReview',
    response: { uid, allowed: true, warnings: [...warnings] },
  };
}
