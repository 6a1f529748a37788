import { coalesceIdenticalQueries } from './coalescing';
import type { ConstraintQuery, ControllerQuery } from '../model/admission-query';
import type { ConstraintQueryResult, ControllerClient } from './controller-client';

function recordingClient(): ControllerClient & {
  calls: ControllerQuery[];
  settle(result: ConstraintQueryResult): void;
} {
  const calls: ControllerQuery[] = [];
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

  it('keeps coalescing and answering across its maps of queries in flight, each query settling its own entry', async () => {
    const resolvers: Array<(result: ConstraintQueryResult) => void> = [];
    const calls: ControllerQuery[] = [];
    const client: ControllerClient = {
      query: (sent) => {
        calls.push(sent);
        return new Promise((resolve) => resolvers.push(resolve));
      },
      close: async () => undefined,
    };
    const coalesced = coalesceIdenticalQueries(client);
    const check = (name: string): ConstraintQuery => ({ ...query({}), checkBody: `{"name":"${name}"}` });
    const first = coalesced.query(check('web'));
    // Enough distinct queries for the maps to be replaced at least once.
    const others = Array.from({ length: 130 }, (_, index) => coalesced.query(check(`other-${index}`)));
    const second = coalesced.query(check('web'));
    const third = coalesced.query(check('web'));
    // The first went to a map since replaced: the second is sent, the third joins it.
    expect(calls.filter((sent) => sent.checkBody === '{"name":"web"}')).toHaveLength(2);
    expect(calls).toHaveLength(132);
    const answerFor = (index: number): ConstraintQueryResult => ({
      ok: false,
      reason: 'timeout',
      detail: `call ${index}`,
    });
    resolvers[0](answerFor(0));
    expect(await first).toEqual(answerFor(0));
    // Settling the first removed its own entry only: a fourth joins the second, still in flight.
    const fourth = coalesced.query(check('web'));
    expect(calls).toHaveLength(132);
    resolvers.forEach((resolve, index) => resolve(answerFor(index)));
    expect(await Promise.all([second, third, fourth])).toEqual([
      answerFor(131),
      answerFor(131),
      answerFor(131),
    ]);
    expect((await Promise.all(others)).map((result) => result.ok)).toEqual(others.map(() => false));
  });
});
