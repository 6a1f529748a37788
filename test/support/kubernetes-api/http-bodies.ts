import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiStatusError, badRequest } from './api-status';
import { isJsonObject, type JsonObject, type JsonValue } from './json';
import { errorMessage } from '../../../services/model/error-message';

// Request and response bodies of the test API server, as the real one reads and writes them: JSON
// only, at most 3 MiB in, errors as Status objects.

const MAX_BODY_BYTES = 3 * 1024 * 1024;

export function sendJson(response: ServerResponse, code: number, body: JsonValue): void {
  const payload = JSON.stringify(body);
  response.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-cache, private',
  });
  response.end(payload);
}

export function sendStatusError(response: ServerResponse, error: ApiStatusError): void {
  sendJson(response, error.code, error.toStatus());
}

/** A POST or PUT body; the server decodes JSON (a missing Content-Type defaults to it, as upstream). */
export async function readObjectBody(request: IncomingMessage): Promise<JsonObject> {
  const contentType = (request.headers['content-type'] ?? 'application/json')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (contentType !== 'application/json') {
    request.resume();
    throw new ApiStatusError(
      415,
      'the body of the request was in an unknown format - accepted media types include: application/json',
    );
  }
  const body = await readBody(request);
  if (!isJsonObject(body)) throw badRequest('the request body must be a JSON object');
  return body;
}

export async function readBody(request: IncomingMessage): Promise<JsonValue | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES)
      throw new ApiStatusError(413, 'request entity too large', 'RequestEntityTooLarge');
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    throw badRequest(`couldn't get version/kind; json parse error: ${errorMessage(error)}`);
  }
}
