import type { JsonObject } from './json';

// Every failure the API server reports is a `Status` object (apimachinery `metav1.Status`) whose
// `code` equals the HTTP status and whose `reason` is the machine-readable cause. Clients branch on
// both (client-node's informer relists on `code: 410`), so the pairs below follow
// k8s.io/apimachinery/pkg/api/errors.

const REASON_BY_CODE: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function reasonForCode(code: number): string {
  return REASON_BY_CODE[code] ?? 'Unknown';
}

/** What the Status names: `details.kind` is the plural resource, as the real server writes it. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
}

function detailsJson(details: StatusDetails | undefined): JsonObject {
  const json: JsonObject = {};
  for (const [key, value] of Object.entries(details ?? {})) {
    if (typeof value === 'string' && value !== '') json[key] = value;
  }
  return json;
}

export function failureStatus(
  code: number,
  message: string,
  reason = reasonForCode(code),
  details?: StatusDetails,
): JsonObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    details: detailsJson(details),
    code,
  };
}

export function successStatus(details: StatusDetails): JsonObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: detailsJson(details) };
}

/** A request failed the way the API server would fail it; the router answers with `status`. */
export class ApiStatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;

  constructor(code: number, message: string, reason = reasonForCode(code), details?: StatusDetails) {
    super(message);
    this.name = 'ApiStatusError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): JsonObject {
    return failureStatus(this.code, this.message, this.reason, this.details);
  }
}

/** `configmaps` for the core group, `deployments.apps` otherwise: how messages name a resource. */
export function qualifiedResource(group: string, plural: string): string {
  return group === '' ? plural : `${plural}.${group}`;
}

export function notFound(group: string, plural: string, name: string): ApiStatusError {
  return new ApiStatusError(404, `${qualifiedResource(group, plural)} "${name}" not found`, 'NotFound', {
    name,
    group,
    kind: plural,
  });
}

export function alreadyExists(group: string, plural: string, name: string): ApiStatusError {
  return new ApiStatusError(
    409,
    `${qualifiedResource(group, plural)} "${name}" already exists`,
    'AlreadyExists',
    { name, group, kind: plural },
  );
}

export function conflict(group: string, plural: string, name: string, why: string): ApiStatusError {
  return new ApiStatusError(
    409,
    `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": ${why}`,
    'Conflict',
    { name, group, kind: plural },
  );
}

export function invalid(kind: string, name: string, group: string, causes: string[]): ApiStatusError {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  return new ApiStatusError(422, `${qualifiedKind} "${name}" is invalid: ${causes.join(', ')}`, 'Invalid', {
    name,
    group,
    kind,
  });
}

export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError(400, message, 'BadRequest');
}
