import { isRecord } from '../model/kubernetes';
import { PORT_FORWARD_HINT, unavailableError, usageError, CliError } from './exit-codes';
import { errorMessage } from '../model/error-message';
import { withoutTerminalControlsDeep } from './terminal-text';

// The command line's only network I/O: GET JSON from the controller's HTTP API, with every way it
// can fail turned into one clear sentence and an exit code (exit-codes.ts).

export interface ControllerApi {
  /** GET `path` (with query) below the base URL; resolves to the parsed JSON of a 2xx answer. */
  getJson(path: string): Promise<unknown>;
  /** POST a JSON body (the admission check); answers and failures as getJson. */
  postJson(path: string, body: unknown): Promise<unknown>;
  readonly baseUrl: string;
}

/** Validates `--url`: an http(s) URL; a path prefix (behind an ingress) is kept. */
export function parseControllerUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`--url ${JSON.stringify(value)} is not a URL; expected e.g. http://localhost:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw usageError(`--url must start with http:// or https://, got ${JSON.stringify(value)}`);
  return url;
}

/** fetch wraps the socket error (TypeError 'fetch failed'); the errno code or reason is in `cause`. */
function rootCause(error: unknown): { code?: string; message: string } {
  let message = errorMessage(error);
  for (let current: unknown = error; isRecord(current); current = current.cause) {
    if (typeof current.code === 'string') return { code: current.code, message };
    if (typeof current.message === 'string') message = current.message;
  }
  return { message };
}

function describeNetworkFailure(error: unknown, url: string, timeoutMs: number): CliError {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return unavailableError(
      `the controller at ${url} did not answer within ${timeoutMs / 1000}s; is it running and ready?`,
    );
  const { code, message } = rootCause(error);
  const reason =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'host not found'
        : (code ?? message);
  return unavailableError(`cannot reach the Forewarn controller at ${url} (${reason}); ${PORT_FORWARD_HINT}`);
}

function errorText(body: unknown): string | undefined {
  return isRecord(body) && typeof body.error === 'string' ? body.error : undefined;
}

/**
 * `bearerToken`: the caller's own credentials (`--as-me`), asked for once, on the first request, so a
 * command that fails before asking the controller never runs an exec plugin.
 */
export function createControllerApi(
  baseUrl: URL,
  timeoutMs: number,
  bearerToken?: () => Promise<string>,
): ControllerApi {
  const base = baseUrl.href.endsWith('/') ? baseUrl.href : `${baseUrl.href}/`;
  let token: Promise<string> | undefined;
  async function requestJson(method: 'GET' | 'POST', path: string, payload?: unknown): Promise<unknown> {
    const url = new URL(path.replace(/^\/+/, ''), base).href;
    const authorization: Record<string, string> = bearerToken
      ? { authorization: `Bearer ${await (token ??= bearerToken())}` }
      : {};
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers:
          method === 'POST'
            ? { accept: 'application/json', 'content-type': 'application/json', ...authorization }
            : { accept: 'application/json', ...authorization },
        ...(method === 'POST' ? { body: JSON.stringify(payload) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw describeNetworkFailure(error, baseUrl.href, timeoutMs);
    }
    const text = await response.text().catch(() => '');
    let body: unknown;
    try {
      // Nothing a server sent reaches the terminal with its escape sequences (terminal-text.ts).
      body = withoutTerminalControlsDeep(JSON.parse(text));
    } catch {
      throw unavailableError(
        `${url} answered ${response.status} with a body that is not JSON; is ${baseUrl.href} the Forewarn controller?`,
      );
    }
    if (response.ok) return body;
    const message = errorText(body) ?? `status ${response.status}`;
    if (response.status === 400) throw usageError(message);
    if (response.status === 503)
      throw unavailableError(`the controller is not ready yet (${message}); retry in a few seconds`);
    throw unavailableError(`${message} (${method} ${url} answered ${response.status})`);
  }
  return {
    baseUrl: baseUrl.href,
    getJson: (path) => requestJson('GET', path),
    postJson: (path, payload) => requestJson('POST', path, payload),
  };
}
