import type { IncomingHttpHeaders } from 'node:http';

// The two POST routes (`/resources`, `/api/v1/admission-check`) take `application/json` in UTF-8
// only. `text/plain` and the form types are the ones a browser sends cross-site without a CORS
// preflight, so accepting them would let any web page a developer opens post to a port-forwarded
// controller; other charsets were never decoded as such. Plain Node headers, so the admission-check
// fast path (admission-check-fast-path.ts) and the express routes apply the very same rule.

const NOT_JSON = 'request body must be sent with Content-Type: application/json';
const NOT_UTF8 = 'request body must be UTF-8 JSON, uncompressed or compressed with gzip, deflate or br';

/**
 * Why this request's body type is refused (answer 415 with it), or undefined when it is accepted.
 * `expected`: the media type the route takes (the batch of checks takes newline-delimited JSON).
 */
export function jsonBodyTypeProblem(
  headers: IncomingHttpHeaders,
  expected = 'application/json',
): string | undefined {
  const contentType = headers['content-type'];
  const notExpected =
    expected === 'application/json' ? NOT_JSON : `request body must be sent with Content-Type: ${expected}`;
  if (contentType === undefined) return notExpected;
  const [mediaType = '', ...parameters] = contentType.split(';');
  if (mediaType.trim().toLowerCase() !== expected) return notExpected;
  for (const parameter of parameters) {
    const match = /^\s*([^=\s]+)\s*=\s*"?([^"\s]*)"?\s*$/.exec(parameter);
    if (match?.[1]?.toLowerCase() !== 'charset') continue;
    const charset = (match[2] ?? '').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return NOT_UTF8;
  }
  return undefined;
}
