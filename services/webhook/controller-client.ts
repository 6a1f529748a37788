import { Agent } from 'undici';
import { isSeverity, VERDICTS, type ListedConstraint, type VerdictName } from '../model/api';
import { isRecord, type Labels } from '../model/kubernetes';

// The webhook's only dependency at admission time: `GET /api/v1/constraints` on the controller
// (spec 4.2, DESIGN.md 5). Every failure is a value, never an exception, so the handler can answer
// `allowed: true` without a try/catch around each call (rule B-1). Limits follow spec section 8.

export interface ConstraintQuery {
  namespace: string;
  /** `request.resource` of the review; null leaves the controller's resource filter off. */
  resource: { group: string; resource: string } | null;
  labels: Labels;
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

/** The fields the webhook reads from each listed constraint, and the verdict when it asked for one. */
export type AdmissionConstraint = Pick<
  ListedConstraint,
  'name' | 'severity' | 'summary' | 'remediationHint'
> & {
  verdict?: VerdictName;
};

export type ConstraintQueryFailure = 'timeout' | 'unreachable' | 'bad_status' | 'bad_body';

export type ConstraintQueryResult =
  | { ok: true; constraints: AdmissionConstraint[]; skippedEntries: number }
  | { ok: false; reason: ConstraintQueryFailure; detail: string };

/** What the admission handler depends on; tests may pass any implementation. */
export interface ConstraintSource {
  query(query: ConstraintQuery): Promise<ConstraintQueryResult>;
}

export interface ControllerClient extends ConstraintSource {
  /** Closes pooled connections. */
  close(): Promise<void>;
}

export interface ControllerClientOptions {
  /** e.g. `http://forewarn-controller.forewarn-system.svc:8080`; a path prefix is kept. */
  baseUrl: string;
  /** Whole-query deadline (spec: 3 s context timeout). */
  timeoutMs?: number;
  /** Socket-level fallback for headers and body (spec: 5 s client timeout). */
  fallbackTimeoutMs?: number;
  /** Larger answers are abandoned unread: a broken controller must not exhaust the pod's memory. */
  maxBodyBytes?: number;
}

export const DEFAULT_QUERY_TIMEOUT_MS = 3_000;
export const DEFAULT_FALLBACK_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** The controller's cap on admission-check bodies; larger objects fall back to the label query. */
export const MAX_CHECK_BODY_BYTES = 1024 * 1024;
const POOL_CONNECTIONS_PER_ORIGIN = 10;
const POOL_IDLE_TIMEOUT_MS = 90_000;

/** `pods` for the core group, `apps/deployments` otherwise (the controller's `resource` parameter). */
export function formatResourceParameter(resource: { group: string; resource: string }): string {
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
 * Path and query of the list request. `labels` is omitted when the object has none: the
 * controller then does not filter by workload selector, which errs towards one warning too many
 * rather than none.
 */
export function constraintQueryPath(basePath: string, query: ConstraintQuery): string {
  const parameters = new URLSearchParams({ namespace: query.namespace });
  if (query.resource) parameters.set('resource', formatResourceParameter(query.resource));
  const labels = formatLabelsParameter(query.labels);
  if (labels) parameters.set('labels', labels);
  if (query.subject) {
    parameters.set('kind', query.subject.kind);
    parameters.set('name', query.subject.name);
    if (Object.keys(query.subject.annotations).length > 0)
      parameters.set('annotations', JSON.stringify(query.subject.annotations));
    if (query.subject.portNames.length > 0) parameters.set('ports', query.subject.portNames.join(','));
  }
  return `${basePath.replace(/\/+$/, '')}/api/v1/constraints?${parameters.toString()}`;
}

/**
 * The admission-check body for an admitted object, or undefined when the label query must be used:
 * no object, an operation other than CREATE/UPDATE, or a body over the controller's 1 MiB cap.
 */
export function admissionCheckBody(
  operation: string,
  admitted: Record<string, unknown> | null,
  oldObject: Record<string, unknown> | null,
  /** From the review: what the object may leave out (apiVersion, kind, metadata.namespace). */
  identity: { apiVersion: string; kind: string; namespace: string },
): string | undefined {
  if (!admitted || (operation !== 'CREATE' && operation !== 'UPDATE')) return undefined;
  const metadata = isRecord(admitted.metadata) ? admitted.metadata : {};
  const object =
    typeof admitted.apiVersion === 'string' &&
    typeof admitted.kind === 'string' &&
    metadata.namespace === identity.namespace
      ? admitted
      : {
          ...admitted,
          apiVersion: identity.apiVersion,
          kind: identity.kind,
          metadata: { ...metadata, namespace: identity.namespace },
        };
  const body = JSON.stringify(
    operation === 'UPDATE' && oldObject ? { operation, object, oldObject } : { operation, object },
  );
  // Characters never exceed bytes; count bytes only for bodies that might be near the cap.
  if (body.length * 3 > MAX_CHECK_BODY_BYTES && Buffer.byteLength(body) > MAX_CHECK_BODY_BYTES)
    return undefined;
  return body;
}

function isVerdict(value: unknown): value is VerdictName {
  return typeof value === 'string' && (VERDICTS as readonly string[]).includes(value);
}

type ParsedList =
  { ok: true; constraints: AdmissionConstraint[]; skippedEntries: number } | { ok: false; detail: string };

/**
 * Validates the list body. A body without a `constraints` array is rejected whole; an entry that
 * lacks a known severity or a summary is skipped, so one odd entry (say, from a newer controller)
 * does not silence the others.
 */
export function parseConstraintList(body: unknown): ParsedList {
  if (!isRecord(body) || !Array.isArray(body.constraints)) {
    return { ok: false, detail: 'response is not an object with a constraints array' };
  }
  const constraints: AdmissionConstraint[] = [];
  let skippedEntries = 0;
  for (const entry of body.constraints as unknown[]) {
    if (
      !isRecord(entry) ||
      !isSeverity(entry.severity) ||
      typeof entry.summary !== 'string' ||
      entry.summary === ''
    ) {
      skippedEntries += 1;
      continue;
    }
    const constraint: AdmissionConstraint = {
      name: typeof entry.name === 'string' ? entry.name : '',
      severity: entry.severity,
      summary: entry.summary,
      remediationHint: typeof entry.remediationHint === 'string' ? entry.remediationHint : '',
    };
    if (isVerdict(entry.verdict)) constraint.verdict = entry.verdict;
    constraints.push(constraint);
  }
  return { ok: true, constraints, skippedEntries };
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

function errorCode(error: unknown): string | undefined {
  if (!isRecord(error)) return undefined;
  if (typeof error.code === 'string') return error.code;
  return errorCode(error.cause);
}

function describe(error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

class OversizedBodyError extends Error {}

interface Abandonable {
  on(event: 'error', listener: () => void): unknown;
  destroy(): void;
}

/** Closes a body unread. undici reports the abort as an 'error' event, expected here, so it is absorbed. */
function abandon(body: Abandonable): void {
  body.on('error', () => undefined);
  body.destroy();
}

async function readCappedBody(body: AsyncIterable<Buffer> & Abandonable, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      // Stop reading: destroying the stream closes the socket instead of downloading the rest.
      abandon(body);
      throw new OversizedBodyError(`response larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function createControllerClient(options: ControllerClientOptions): ControllerClient {
  const base = new URL(options.baseUrl);
  const timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const fallbackTimeoutMs = options.fallbackTimeoutMs ?? DEFAULT_FALLBACK_TIMEOUT_MS;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const agent = new Agent({
    connections: POOL_CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: POOL_IDLE_TIMEOUT_MS,
    keepAliveMaxTimeout: POOL_IDLE_TIMEOUT_MS,
    headersTimeout: fallbackTimeoutMs,
    bodyTimeout: fallbackTimeoutMs,
    connect: { timeout: fallbackTimeoutMs },
  });

  async function query(constraintQuery: ConstraintQuery): Promise<ConstraintQueryResult> {
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      const response = await agent.request(
        constraintQuery.checkBody === undefined
          ? {
              origin: base.origin,
              path: constraintQueryPath(base.pathname, constraintQuery),
              method: 'GET',
              headers: { accept: 'application/json' },
              signal: deadline,
            }
          : {
              origin: base.origin,
              path: `${base.pathname.replace(/\/+$/, '')}/api/v1/admission-check`,
              method: 'POST',
              headers: { accept: 'application/json', 'content-type': 'application/json' },
              body: constraintQuery.checkBody,
              signal: deadline,
            },
      );
      if (response.statusCode !== 200) {
        // Drop the body (bounded) so the connection can go back to the pool.
        await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        return { ok: false, reason: 'bad_status', detail: `controller answered HTTP ${response.statusCode}` };
      }
      const declaredLength = Number(response.headers['content-length']);
      if (Number.isFinite(declaredLength) && declaredLength > maxBodyBytes) {
        abandon(response.body);
        return {
          ok: false,
          reason: 'bad_body',
          detail: `response of ${declaredLength} bytes exceeds ${maxBodyBytes}`,
        };
      }
      const text = await readCappedBody(response.body, maxBodyBytes);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (error) {
        return { ok: false, reason: 'bad_body', detail: `response is not JSON: ${(error as Error).message}` };
      }
      const parsed = parseConstraintList(json);
      return parsed.ok ? parsed : { ok: false, reason: 'bad_body', detail: parsed.detail };
    } catch (error) {
      if (error instanceof OversizedBodyError)
        return { ok: false, reason: 'bad_body', detail: error.message };
      if (deadline.aborted) {
        return { ok: false, reason: 'timeout', detail: `no complete answer within ${timeoutMs} ms` };
      }
      const code = errorCode(error);
      if (code && TIMEOUT_CODES.has(code)) return { ok: false, reason: 'timeout', detail: describe(error) };
      return { ok: false, reason: 'unreachable', detail: describe(error) };
    }
  }

  return {
    query,
    close: () => agent.close(),
  };
}
