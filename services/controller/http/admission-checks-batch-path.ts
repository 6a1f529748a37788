import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ADMISSION_CHECKS_CONTENT_TYPE,
  ADMISSION_CHECKS_PATH,
  MAX_CHECKS_PER_BATCH,
} from '../../model/admission-query';
import { ADMISSION_CHECK_BODY_LIMIT_BYTES } from './admission-check-route';
import {
  answerOneCheck,
  readBodyAndLevel,
  sendJson,
  type AdmissionCheckFastPathOptions,
  type FastPath,
} from './admission-check-fast-path';
import { jsonBodyTypeProblem } from './json-body-type';

// `POST /api/v1/admission-checks`: the checks the webhook had waiting while its earlier query was
// in flight, in one request (docs/decisions.md, "Checks in flight together"). Under a burst of
// reviews the controller then reads, parses the headers of and answers one request for several
// checks, and runs them one after the other while its caches are warm. The body is the checks'
// bodies, one per line (each is what `POST /api/v1/admission-check` takes; JSON text has no raw
// newline), at most MAX_CHECKS_PER_BATCH of them and 1 MiB in all; the answer is
// `{"answers": [{"status": <what the single route answers>, "body": <its JSON>}, ...]}` in the same
// order, each check answered exactly as the single route would, with the same access rule. A batch
// that cannot be read at all gets one error for the whole request.

function refuse(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  // The body may not have been read: the connection is not reused for another request.
  response.shouldKeepAlive = false;
  sendJson(response, status, JSON.stringify({ error: message }));
}

/**
 * The check bodies of a batch, or why it is refused (400). Split on the bytes and each line decoded
 * on its own (a newline byte is never part of a UTF-8 sequence): each body is then a string of its
 * own, where `String.split` would give slices that keep the whole batch alive for as long as the
 * memo keeps one of them as a key.
 */
export function splitBatch(body: Buffer): string[] | string {
  const parts: string[] = [];
  let start = 0;
  while (start < body.length) {
    const newline = body.indexOf(0x0a, start);
    const end = newline === -1 ? body.length : newline;
    if (parts.length === MAX_CHECKS_PER_BATCH)
      return `a batch of checks holds at most ${MAX_CHECKS_PER_BATCH} check bodies`;
    parts.push(body.toString('utf8', start, end));
    start = end + 1;
  }
  if (parts.length === 0) return 'a batch of checks must hold at least one check body, one per line';
  return parts;
}

async function answerBatch(
  options: AdmissionCheckFastPathOptions,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const read = await readBodyAndLevel(options, request, response);
  if (!read) return;
  const { level } = read;
  const parts = splitBatch(read.body);
  if (typeof parts === 'string') return sendJson(response, 400, JSON.stringify({ error: parts }));
  try {
    let json = '{"answers":[';
    for (let index = 0; index < parts.length; index++) {
      const answer = await answerOneCheck(options, parts[index], level, request);
      json += `${index === 0 ? '' : ','}{"status":${answer.status},"body":${answer.json}}`;
    }
    sendJson(response, 200, `${json}]}`);
  } catch (failure) {
    options.logger.error(
      { err: failure, path: ADMISSION_CHECKS_PATH },
      'request failed; this is a bug, please report it',
    );
    sendJson(response, 500, JSON.stringify({ error: 'internal error; see the controller log' }));
  }
}

/** Takes every request for the batch route; false for any other path. */
export function admissionChecksBatchPath(options: AdmissionCheckFastPathOptions): FastPath {
  return (request, response) => {
    if (request.url !== ADMISSION_CHECKS_PATH) return false;
    options.observe?.(request, response, () => ADMISSION_CHECKS_PATH);
    if (request.method !== 'POST') {
      refuse(response, 405, 'method not allowed; this route takes POST', { Allow: 'POST' });
      return true;
    }
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      refuse(response, 415, 'a batch of checks must be sent uncompressed');
      return true;
    }
    const typeProblem = jsonBodyTypeProblem(request.headers, ADMISSION_CHECKS_CONTENT_TYPE);
    if (typeProblem !== undefined) {
      refuse(response, 415, typeProblem);
      return true;
    }
    const declaredLength = Number(request.headers['content-length']);
    if (request.headers['content-length'] === undefined || !Number.isSafeInteger(declaredLength)) {
      refuse(response, 411, 'a batch of checks must declare its Content-Length');
      return true;
    }
    if (declaredLength > ADMISSION_CHECK_BODY_LIMIT_BYTES) {
      refuse(response, 413, `a batch of checks may hold at most ${ADMISSION_CHECK_BODY_LIMIT_BYTES} bytes`);
      return true;
    }
    void answerBatch(options, request, response);
    return true;
  };
}
