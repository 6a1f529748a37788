import { Agent, type Dispatcher } from 'undici';
import { isSeverity, VERDICTS, type ListedConstraint, type VerdictName } from '../model/api';
import { isOpaqueReference } from '../model/opaque-reference';
import { isRecord } from '../model/kubernetes';
import {
  ADMISSION_CHECK_PATH,
  ADMISSION_CHECKS_CONTENT_TYPE,
  ADMISSION_CHECKS_PATH,
  constraintQueryPath,
  listQueryOf,
  type ControllerQuery,
} from '../model/admission-query';
import { errorMessage } from '../model/error-message';
import { withFields } from '../model/object-copy';

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
  /** `status`: the controller's HTTP status, for `bad_status`. */
  | { ok: false; reason: ConstraintQueryFailure; detail: string; status?: number };

/** What the admission handler depends on; tests may pass any implementation. */
export interface ConstraintSource {
  query(query: ControllerQuery): Promise<ConstraintQueryResult>;
}

export interface ControllerClient extends ConstraintSource {
  /** Closes pooled connections. */
  close(): Promise<void>;
}

/** A controller that answers several admission checks in one request (check-batching.ts). */
export interface CheckBatchClient extends ControllerClient {
  /** `timeoutMs`: this query's deadline instead of the client's. */
  query(query: ControllerQuery, timeoutMs?: number): Promise<ConstraintQueryResult>;
  /**
   * The answers to several check bodies, in order, from one request that must be answered within
   * `timeoutMs`. A failure of the request is every check's failure.
   */
  queryChecks(checkBodies: readonly string[], timeoutMs: number): Promise<ConstraintQueryResult[]>;
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

/** The status, declared length and body of one answer, or why there is none. */
type RawAnswer =
  | { kind: 'answered'; statusCode: number; text: string }
  | { kind: 'failed'; result: Extract<ConstraintQueryResult, { ok: false }> };

/** Bodies of answers other than 200 are read this far, and discarded, so the connection can be reused. */
const DISCARDED_BODY_BYTES = 64 * 1024;

function headerValue(rawHeaders: Buffer[], name: string): string | undefined {
  for (let index = 0; index + 1 < rawHeaders.length; index += 2)
    if (rawHeaders[index].toString('latin1').toLowerCase() === name)
      return rawHeaders[index + 1].toString('latin1');
  return undefined;
}

/**
 * One request through undici's dispatcher, its answer read in the handler's callbacks. A plain
 * `agent.request` costs, per query, an AbortSignal with its timer and DOMException, a readable body
 * stream and the promises around them: about a tenth of the webhook's CPU per review
 * (docs/benchmarks.md, issue 33). Here one timer bounds the whole query and the body is collected
 * as it arrives; the outcomes are the same values, with the same details.
 */
function dispatchQuery(
  agent: Dispatcher,
  request: Dispatcher.DispatchOptions,
  limits: { timeoutMs: number; maxBodyBytes: number },
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    let abort: ((error?: Error) => void) | undefined;
    let statusCode = 0;
    let receivedBytes = 0;
    const chunks: Buffer[] = [];
    const settle = (answer: RawAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(answer);
    };
    const fail = (reason: ConstraintQueryFailure, detail: string) =>
      settle({ kind: 'failed', result: { ok: false, reason, detail } });
    const failWithStatus = (status: number) =>
      settle({
        kind: 'failed',
        result: { ok: false, reason: 'bad_status', detail: `controller answered HTTP ${status}`, status },
      });
    /** Gives up on the answer: the connection is closed instead of reading the rest. */
    const stop = () => abort?.(new Error('the webhook stopped reading the answer'));
    const deadline = setTimeout(() => {
      fail('timeout', `no complete answer within ${limits.timeoutMs} ms`);
      stop();
    }, limits.timeoutMs);
    const handler: Dispatcher.DispatchHandlers = {
      onConnect(abortRequest) {
        abort = abortRequest;
        // The deadline passed while the request waited for a connection of the pool.
        if (settled) stop();
      },
      onHeaders(status, rawHeaders) {
        if (status < 200) return true;
        statusCode = status;
        if (status !== 200) {
          failWithStatus(status);
          return true;
        }
        const declaredLength = Number(headerValue(rawHeaders, 'content-length'));
        if (Number.isFinite(declaredLength) && declaredLength > limits.maxBodyBytes) {
          fail('bad_body', `response of ${declaredLength} bytes exceeds ${limits.maxBodyBytes}`);
          stop();
        }
        return true;
      },
      onData(chunk) {
        receivedBytes += chunk.length;
        if (statusCode !== 200) {
          if (receivedBytes > DISCARDED_BODY_BYTES) stop();
          return true;
        }
        if (receivedBytes > limits.maxBodyBytes) {
          fail('bad_body', `response larger than ${limits.maxBodyBytes} bytes`);
          stop();
          return true;
        }
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        settle({ kind: 'answered', statusCode, text: Buffer.concat(chunks).toString('utf8') });
      },
      onError(error) {
        if (settled) return;
        const code = errorCode(error);
        if (code && TIMEOUT_CODES.has(code)) fail('timeout', describe(error));
        else fail('unreachable', describe(error));
      },
    };
    try {
      agent.dispatch(request, handler);
    } catch (error) {
      fail('unreachable', describe(error));
    }
  });
}

function authorizedHeaders(token: string | undefined): Record<string, string> {
  return token
    ? { accept: 'application/json', authorization: `Bearer ${token}` }
    : { accept: 'application/json' };
}

/** The result of one check from its entry in a batch's answer (`{"status", "body"}`). */
function resultOfBatchEntry(entry: unknown): ConstraintQueryResult {
  if (!isRecord(entry) || typeof entry.status !== 'number')
    return { ok: false, reason: 'bad_body', detail: 'batch answer entry is not an object with a status' };
  if (entry.status !== 200)
    return {
      ok: false,
      reason: 'bad_status',
      detail: `controller answered HTTP ${entry.status}`,
      status: entry.status,
    };
  const parsed = parseConstraintList(entry.body);
  return parsed.ok ? parsed : { ok: false, reason: 'bad_body', detail: parsed.detail };
}

/** Every check's result from a batch's answer text, or the one failure they all share. */
export function resultsOfBatchAnswer(
  text: string,
  checks: number,
): ConstraintQueryResult[] | Extract<ConstraintQueryResult, { ok: false }> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: 'bad_body', detail: `response is not JSON: ${errorMessage(error)}` };
  }
  if (!isRecord(json) || !Array.isArray(json.answers) || json.answers.length !== checks)
    return {
      ok: false,
      reason: 'bad_body',
      detail: `batch response is not an object with an answers array of ${checks} entries`,
    };
  return (json.answers as unknown[]).map(resultOfBatchEntry);
}

export function createControllerClient(options: ControllerClientOptions): CheckBatchClient {
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

  const checkPath = `${base.pathname.replace(/\/+$/, '')}${ADMISSION_CHECK_PATH}`;
  const batchPath = `${base.pathname.replace(/\/+$/, '')}${ADMISSION_CHECKS_PATH}`;
  const limits = { timeoutMs, maxBodyBytes };

  async function query(
    constraintQuery: ControllerQuery,
    queryTimeoutMs = timeoutMs,
  ): Promise<ConstraintQueryResult> {
    const listQuery = listQueryOf(constraintQuery);
    const answer = await dispatchQuery(
      agent,
      listQuery
        ? {
            origin: base.origin,
            path: constraintQueryPath(base.pathname, listQuery),
            method: 'GET',
            headers: authorizedHeaders(options.bearerToken?.()),
          }
        : {
            origin: base.origin,
            path: checkPath,
            method: 'POST',
            headers: withFields(authorizedHeaders(options.bearerToken?.()), {
              'content-type': 'application/json',
            }),
            body: constraintQuery.checkBody,
          },
      queryTimeoutMs === timeoutMs ? limits : { timeoutMs: queryTimeoutMs, maxBodyBytes },
    );
    if (answer.kind === 'failed') return answer.result;
    let json: unknown;
    try {
      json = JSON.parse(answer.text);
    } catch (error) {
      return { ok: false, reason: 'bad_body', detail: `response is not JSON: ${errorMessage(error)}` };
    }
    const parsed = parseConstraintList(json);
    return parsed.ok ? parsed : { ok: false, reason: 'bad_body', detail: parsed.detail };
  }

  async function queryChecks(
    checkBodies: readonly string[],
    batchTimeoutMs: number,
  ): Promise<ConstraintQueryResult[]> {
    const answer = await dispatchQuery(
      agent,
      {
        origin: base.origin,
        path: batchPath,
        method: 'POST',
        headers: withFields(authorizedHeaders(options.bearerToken?.()), {
          'content-type': ADMISSION_CHECKS_CONTENT_TYPE,
        }),
        body: checkBodies.join('\n'),
      },
      { timeoutMs: batchTimeoutMs, maxBodyBytes: maxBodyBytes * checkBodies.length },
    );
    const results =
      answer.kind === 'failed' ? answer.result : resultsOfBatchAnswer(answer.text, checkBodies.length);
    return Array.isArray(results) ? results : checkBodies.map(() => results);
  }

  return {
    query,
    queryChecks,
    close: () => agent.close(),
  };
}
