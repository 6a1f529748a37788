import type { Readable } from 'node:stream';
import { Agent } from 'undici';
import { isSeverity, VERDICTS, type ListedConstraint, type VerdictName } from '../model/api';
import { isOpaqueReference } from '../model/opaque-reference';
import { isRecord } from '../model/kubernetes';
import { ADMISSION_CHECK_PATH, constraintQueryPath, type ConstraintQuery } from '../model/admission-query';
import { errorMessage } from '../model/error-message';

// The webhook's only dependency at admission time: `GET /api/v1/constraints` on the controller
// (spec 4.2, DESIGN.md 5). Every failure is a value, never an exception, so the handler can answer
// `allowed: true` without a try/catch around each call (rule B-1). Limits follow spec section 8.

/** The fields the webhook reads from each listed constraint, and the verdict when it asked for one. */
export type AdmissionConstraint = Pick<
  ListedConstraint,
  'name' | 'severity' | 'summary' | 'remediationHint' | 'ref'
> & {
  verdict?: VerdictName;
};

function isVerdict(value: unknown): value is VerdictName {
  return typeof value === 'string' && (VERDICTS as readonly string[]).includes(value);
}

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
  /**
   * The webhook's identity for the controller (its projected ServiceAccount token): with it the
   * controller answers unredacted; without it, at its configured detail level (DESIGN.md 5).
   */
  bearerToken?: () => string | undefined;
}

export const DEFAULT_QUERY_TIMEOUT_MS = 3_000;
export const DEFAULT_FALLBACK_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const POOL_CONNECTIONS_PER_ORIGIN = 10;
const POOL_IDLE_TIMEOUT_MS = 90_000;

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
    // Answered redacted (a webhook the controller does not recognise): the warning keeps the handle.
    if (isOpaqueReference(entry.ref)) constraint.ref = entry.ref;
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
  const message = errorMessage(error);
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

/** Reads a body up to `maxBytes` (listening for events: an async iterator per query was measurable CPU). */
function readCappedBody(body: Readable, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        body.off('data', onData);
        // Stop reading: destroying the stream closes the socket instead of downloading the rest.
        abandon(body);
        reject(new OversizedBodyError(`response larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    body.on('data', onData);
    body.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    body.once('error', reject);
    // After 'end' this is a no-op; before it, the body was cut short.
    body.once('close', () => reject(new Error('response closed before its body ended')));
  });
}

function authorizedHeaders(token: string | undefined): Record<string, string> {
  return token
    ? { accept: 'application/json', authorization: `Bearer ${token}` }
    : { accept: 'application/json' };
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
              headers: authorizedHeaders(options.bearerToken?.()),
              signal: deadline,
            }
          : {
              origin: base.origin,
              path: `${base.pathname.replace(/\/+$/, '')}${ADMISSION_CHECK_PATH}`,
              method: 'POST',
              headers: { ...authorizedHeaders(options.bearerToken?.()), 'content-type': 'application/json' },
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
        return { ok: false, reason: 'bad_body', detail: `response is not JSON: ${errorMessage(error)}` };
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
