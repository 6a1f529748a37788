import { coalesceIdenticalQueries } from './coalescing';
import type { ConstraintQuery } from '../model/admission-query';
import type { ConstraintQueryResult, ControllerClient } from './controller-client';

function recordingClient(): ControllerClient & {
  calls: ConstraintQuery[];
  settle(result: ConstraintQueryResult): void;
} {
  const calls: ConstraintQuery[] = [];
  let pending: Array<(result: ConstraintQueryResult) => void> = [];
  return {
    calls,
    query: (query) => {
      calls.push(query);
      return new Promise((resolve) => pending.push(resolve));
    },
    close: async () => undefined,
    settle: (result) => {
      const waiting = pending;
      pending = [];
      for (const resolve of waiting) resolve(result);
    },
  };
}

const query = (labels: Record<string, string>): ConstraintQuery => ({
  namespace: 'shop',
  resource: { group: '', resource: 'pods' },
  labels,
});
const answer: ConstraintQueryResult = { ok: true, skippedEntries: 0, constraints: [] };

describe('coalescing identical controller queries', () => {
  it('sends one query for identical concurrent reviews and answers all of them', async () => {
    const client = recordingClient();
    const coalesced = coalesceIdenticalQueries(client);
    const answers = Promise.all([
      coalesced.query(query({ app: 'web' })),
      coalesced.query(query({ app: 'web' })),
    ]);
    expect(client.calls).toHaveLength(1);
    client.settle(answer);
    expect(await answers).toEqual([answer, answer]);
  });

  it('keeps different queries apart and caches nothing once a query settled', async () => {
    const client = recordingClient();
    const coalesced = coalesceIdenticalQueries(client);
    const first = coalesced.query(query({ app: 'web' }));
    const other = coalesced.query(query({ app: 'api' }));
    expect(client.calls).toHaveLength(2);
    client.settle(answer);
    await Promise.all([first, other]);
    const later = coalesced.query(query({ app: 'web' }));
    expect(client.calls).toHaveLength(3);
    client.settle({ ok: false, reason: 'timeout', detail: 'slow' });
    expect(await later).toEqual({ ok: false, reason: 'timeout', detail: 'slow' });
  });
});
