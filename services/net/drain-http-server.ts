import type { Server } from 'node:http';

// How Forewarn's HTTP servers stop (SIGTERM on a rollout, a test's restart). `server.close()` closes
// the connections idle at that moment and then waits for every other one to end; a keep-alive
// connection busy at that moment turns idle after its answer and is left open until the keep-alive
// timeout (65 s here), while a client that keeps sending on it is still served. Under a steady stream
// of queries (the webhook's to the controller) a close could wait a minute. Here each connection is
// closed as soon as it turns idle, and whatever is left after the drain time is cut.

/** How long requests in flight may finish before the server cuts them. */
export const DEFAULT_DRAIN_MS = 8_000;
/** How often connections that turned idle during the drain are closed. */
const IDLE_SWEEP_MS = 100;

export interface DrainOptions {
  drainMs?: number;
  /** Cuts what the HTTP server does not track as connections (a TLS handshake in progress). */
  cutUntracked?: () => void;
}

/** Stops accepting, lets in-flight requests finish for up to `drainMs`, then cuts what is left. */
export async function drainHttpServer(server: Server, options: DrainOptions = {}): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  const deadline = setTimeout(() => {
    server.closeAllConnections();
    options.cutUntracked?.();
  }, options.drainMs ?? DEFAULT_DRAIN_MS);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
}
