import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

// Requests Node's own HTTP parser refuses (malformed request line, headers too large, a request
// that took too long) never reach express: by default Node answers them with an empty body. Every
// Forewarn server answers them in JSON like any other error, where the socket still allows it.

interface ClientError extends Error {
  code?: string;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/** The status and a fixed message (nothing the client sent is echoed) for a parser error. */
export function describeParserError(error: ClientError): { status: number; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'request headers too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'request not received in time' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'request chunk extensions too large' };
    default:
      return { status: 400, message: 'malformed HTTP request' };
  }
}

/** The raw HTTP/1.1 answer written on the socket. */
export function parserErrorResponse(error: ClientError): string {
  const { status, message } = describeParserError(error);
  const body = JSON.stringify({ error: message });
  return [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** How long a socket that erred may take to flush its JSON answer before it is destroyed. */
const ANSWER_GRACE_MS = 2_000;

/** Answers parser errors of `server` in JSON (`server` may be HTTP or HTTPS). */
export function answerClientErrorsAsJson(server: Pick<Server, 'on'>): void {
  server.on('clientError', (error: ClientError, socket: Duplex) => {
    // A reset or half-closed connection cannot take an answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(parserErrorResponse(error));
    // A client that never reads the answer (or a socket that cannot flush it) would hold the socket
    // open: whatever happens, it is destroyed shortly after the answer was handed over.
    const cutoff = setTimeout(() => socket.destroy(), ANSWER_GRACE_MS);
    cutoff.unref();
    socket.once('close', () => clearTimeout(cutoff));
  });
}
