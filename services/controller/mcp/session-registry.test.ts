import type { IncomingMessage } from 'node:http';
import {
  admitSession,
  clientKeyOf,
  DEFAULT_SESSION_LIMITS,
  idleSessions,
  type TrackedSession,
} from './session-registry';

const limits = { maxSessions: 4, maxPerClient: 2, idleMs: 1_000, evictableAfterMs: 100 };

function table(entries: Array<[string, string, number]>): Map<string, TrackedSession> {
  return new Map(entries.map(([id, client, lastActivity]) => [id, { client, lastActivity }]));
}

describe('admitSession', () => {
  it('admits while there is room, closing nothing', () => {
    expect(admitSession(table([['a', 'x', 0]]), 'x', 10, limits)).toEqual({ admit: true, close: [] });
  });

  it("a client at its cap replaces its own least recently used session, not another client's", () => {
    const sessions = table([
      ['other', 'y', 0],
      ['old', 'x', 5],
      ['new', 'x', 9],
    ]);
    expect(admitSession(sessions, 'x', 10, limits)).toEqual({ admit: true, close: ['old'] });
  });

  it('a full port evicts the least recently used session idle long enough', () => {
    const sessions = table([
      ['a', 'p', 0],
      ['b', 'q', 50],
      ['c', 'r', 900],
      ['d', 's', 950],
    ]);
    expect(admitSession(sessions, 'new', 1_000, limits)).toEqual({ admit: true, close: ['a'] });
  });

  it('a full port of sessions all in use refuses', () => {
    const sessions = table([
      ['a', 'p', 950],
      ['b', 'q', 960],
      ['c', 'r', 970],
      ['d', 's', 980],
    ]);
    expect(admitSession(sessions, 'new', 1_000, limits)).toEqual({ admit: false });
  });

  it('100 initializations of one client never leave it more than its cap, and others keep room', () => {
    const sessions = new Map<string, TrackedSession>([['agent', { client: 'good', lastActivity: 0 }]]);
    for (let serial = 0; serial < 100; serial++) {
      const admission = admitSession(sessions, 'flood', serial, DEFAULT_SESSION_LIMITS);
      if (!admission.admit) throw new Error('refused');
      for (const id of admission.close) sessions.delete(id);
      sessions.set(`flood-${serial}`, { client: 'flood', lastActivity: serial });
    }
    expect([...sessions.values()].filter((session) => session.client === 'flood')).toHaveLength(
      DEFAULT_SESSION_LIMITS.maxPerClient,
    );
    expect(sessions.has('agent')).toBe(true);
  });
});

describe('idleSessions', () => {
  it('names every session idle past the limit, whatever its transport', () => {
    const sessions = table([
      ['sse', 'x', 0],
      ['fresh', 'x', 900],
    ]);
    expect(idleSessions(sessions, 1_500, 1_000)).toEqual(['sse']);
  });
});

describe('clientKeyOf', () => {
  const request = (authorization: string | undefined, address: string) =>
    ({
      headers: authorization === undefined ? {} : { authorization },
      socket: { remoteAddress: address },
    }) as unknown as IncomingMessage;

  it('keys by token when there is one, never holding it as text', () => {
    const key = clientKeyOf(request('Bearer secret-token', '10.0.0.1'));
    expect(key).toMatch(/^token:[0-9a-f]{64}$/);
    expect(key).not.toContain('secret');
    expect(clientKeyOf(request('Bearer secret-token', '10.0.0.2'))).toBe(key);
  });

  it('keys by address without a token', () => {
    expect(clientKeyOf(request(undefined, '10.0.0.1'))).toBe('address:10.0.0.1');
  });
});
