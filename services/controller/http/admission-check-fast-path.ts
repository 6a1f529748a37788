import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../logging/logger';
import { ADMISSION_CHECK_PATH } from '../../model/admission-query';
import type { DetailLevel } from '../../model/api';
import type { RequestObserver } from './request-observer';
import {
  ADMISSION_CHECK_BODY_LIMIT_BYTES,
  mayAskForOperation,
  type AdmissionCheckAnswerer,
  type CallerAdmissionCheckAnswerer,
  type SerialisedAnswer,
} from './admission-check-route';
import type { ApiAccess } from './api-auth';
import { jsonBodyTypeProblem } from './json-body-type';

// The webhook asks `POST /api/v1/admission-check` once per admission review, so the controller's
// CPU per request is half of what every review costs (issue 16). The requests the webhook sends (the
// exact path, a declared length within the limit, an uncompressed UTF-8 JSON body) are answered here on
// Node's own request and response, with the same answerer, access rule, metrics and headers as the
// express route. Anything else (another spelling of the path, a chunked, compressed or oversized
// body, another charset or content type) goes through the express route, which answers it (a body
// that is not UTF-8 `application/json` with 415, before any TokenReview).

export interface AdmissionCheckFastPathOptions {
  answerer: AdmissionCheckAnswerer;
  /** Callers below `full` (never the webhook) are answered for their own RBAC (issue 24). */
  forCaller?: CallerAdmissionCheckAnswerer;
  /** Absent: every caller reads `full` (`--api-auth=none`), as with the express route. */
  access?: ApiAccess;
  observe?: RequestObserver;
  logger: Logger;
}

/** Returns true when it took the request; false leaves it to express. */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

/** UTF-8 `application/json`, uncompressed: anything else (refused with 415 or inflated) is express's. */
function isUncompressedUtf8Json(request: IncomingMessage): boolean {
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return false;
  return jsonBodyTypeProblem(request.headers) === undefined;
}

/** The body's bytes; Node's parser guarantees they are no more than the declared length. */
function readBodyBytes(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // Plain listeners, settled once: `once` wraps each listener in a closure on every request.
    let settled = false;
    const onEnd = () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', onEnd);
    request.on('error', onError);
    // `close` follows `end` on every request: the error (and its stack) only when it came first.
    request.on('close', () => {
      if (!settled) onError(new Error('the request closed before its body ended'));
    });
  });
}

export function sendJson(response: ServerResponse, status: number, json: string): void {
  response.writeHead(status, {
    'X-Content-Type-Options': 'nosniff',
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
  });
  response.end(json);
}

/**
 * One check body's answer for a caller at `level`. The webhook is answered at `full` synchronously,
 * from the memo: no review on its path. A body without an operation (`forewarn check`) first finds
 * whether the object exists.
 */
export function answerOneCheck(
  options: Pick<AdmissionCheckFastPathOptions, 'answerer' | 'forCaller'>,
  text: string,
  level: DetailLevel,
  request: IncomingMessage,
): SerialisedAnswer | Promise<SerialisedAnswer> {
  return options.forCaller && (level !== 'full' || mayAskForOperation(text))
    ? options.forCaller(text, level, request)
    : options.answerer(text, level);
}

/**
 * The body's bytes and the level the caller may read, or undefined (the connection destroyed) when
 * the caller went away mid-body: there is no one to answer.
 */
export async function readBodyAndLevel(
  options: Pick<AdmissionCheckFastPathOptions, 'access'>,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<{ body: Buffer; level: DetailLevel } | undefined> {
  try {
    const [body, level] = await Promise.all([
      readBodyBytes(request),
      options.access ? options.access.levelFor(request) : Promise.resolve<DetailLevel>('full'),
    ]);
    return { body, level };
  } catch {
    response.destroy();
    return undefined;
  }
}

async function answer(
  options: AdmissionCheckFastPathOptions,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const read = await readBodyAndLevel(options, request, response);
  if (!read) return;
  try {
    const result = await answerOneCheck(options, read.body.toString('utf8'), read.level, request);
    sendJson(response, result.status, result.json);
  } catch (failure) {
    options.logger.error(
      { err: failure, path: ADMISSION_CHECK_PATH },
      'request failed; this is a bug, please report it',
    );
    sendJson(response, 500, JSON.stringify({ error: 'internal error; see the controller log' }));
  }
}

export function admissionCheckFastPath(options: AdmissionCheckFastPathOptions): FastPath {
  return (request, response) => {
    if (request.method !== 'POST' || request.url !== ADMISSION_CHECK_PATH) return false;
    const declaredLength = Number(request.headers['content-length']);
    if (
      !Number.isSafeInteger(declaredLength) ||
      declaredLength > ADMISSION_CHECK_BODY_LIMIT_BYTES ||
      !isUncompressedUtf8Json(request)
    )
      return false;
    options.observe?.(request, response, () => ADMISSION_CHECK_PATH);
    void answer(options, request, response);
    return true;
  };
}
