import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { bearerToken } from '../http/api-auth';

// The MCP port's sessions, bounded per client and in idle time (issue 32, row 9): 100 `initialize`
// POSTs in 0.9 s, or 100 held `GET /sse`, filled the port's 100 sessions and every other agent got
// 503 for the 30 minutes until they went idle. Now:
// - a client (its bearer token, or without one its address) holds at most `maxPerClient` sessions;
//   opening one more closes its own least recently used one, so a client that re-initializes in a
//   loop only ever replaces its own sessions;
// - when the port is full, the least recently used session idle for `evictableAfterMs` makes room
//   (its client re-initializes on the 404 it gets next, as MCP clients do); only when every session
//   is in use is a new one refused with 503;
// - a session without a request for `idleMs` is closed, SSE included (the keep-alive comments on an
//   SSE stream are the server's, not the client's, and do not count).

export interface SessionLimits {
  maxSessions: number;
  maxPerClient: number;
  idleMs: number;
  /** A session idle this long may be closed to make room for another client's. */
  evictableAfterMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxSessions: 100,
  maxPerClient: 16,
  idleMs: 10 * 60_000,
  evictableAfterMs: 60_000,
};

export interface TrackedSession {
  client: string;
  lastActivity: number;
}

/** Who opened a session: its bearer token (hashed, never kept as text), or its address. */
export function clientKeyOf(request: IncomingMessage): string {
  const token = bearerToken(request);
  if (token !== undefined) return `token:${createHash('sha256').update(token).digest('hex')}`;
  return `address:${request.socket.remoteAddress ?? 'unknown'}`;
}

/** What to do for a new session of `client`: close these first, or refuse it. */
export type Admission = { admit: true; close: string[] } | { admit: false };

/**
 * Decides which sessions to close so that `client` may open one, or that it may not. Pure: the
 * caller closes them (closing one removes it from `sessions` through its transport's onclose).
 */
export function admitSession<S extends TrackedSession>(
  sessions: ReadonlyMap<string, S>,
  client: string,
  now: number,
  limits: SessionLimits,
): Admission {
  const byAge = [...sessions.entries()].sort(([, left], [, right]) => left.lastActivity - right.lastActivity);
  const own = byAge.filter(([, session]) => session.client === client);
  const close = own.slice(0, Math.max(0, own.length - limits.maxPerClient + 1)).map(([id]) => id);
  if (sessions.size - close.length < limits.maxSessions) return { admit: true, close };
  const evictable = byAge.find(
    ([id, session]) => !close.includes(id) && now - session.lastActivity >= limits.evictableAfterMs,
  );
  return evictable ? { admit: true, close: [...close, evictable[0]] } : { admit: false };
}

/** Sessions without a request for `idleMs`, whatever their transport. */
export function idleSessions<S extends TrackedSession>(
  sessions: ReadonlyMap<string, S>,
  now: number,
  idleMs: number,
): string[] {
  return [...sessions.entries()]
    .filter(([, session]) => now - session.lastActivity > idleMs)
    .map(([id]) => id);
}
