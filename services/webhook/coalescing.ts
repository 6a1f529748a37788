import { constraintQueryPath, listQueryOf, type ControllerQuery } from '../model/admission-query';
import type { ConstraintQueryResult, ControllerClient } from './controller-client';

// Identical admission reviews arrive together (a ReplicaSet creating fifty equal pods, a rollout
// across replicas): they share one controller query that is already in flight instead of sending
// fifty. Every review still gets an answer computed after it arrived — nothing is cached once the
// query settles — so freshness is what querying per review gives, at a fraction of the cost
// (docs/benchmarks.md: about 1.75x throughput at 16 concurrent reviews).

// The queries in flight are held in maps that are replaced after every MAP_GENERATION queries
// instead of one map for the process's life. A map that adds and deletes an entry for every review is
// rehashed again and again, and once its table is in V8's old generation each discarded table keeps
// the next one, with its bodies and answers, alive through the scavenges until a full collection:
// under a load of distinct reviews everything coalescing touched was promoted (issue 33,
// docs/decisions.md). A replaced map keeps its queries until they settle; an identical query that
// arrives just after a replacement is sent on its own, which only costs what coalescing would save.
const MAP_GENERATION = 64;

export function coalesceIdenticalQueries(client: ControllerClient): ControllerClient {
  // Label queries by their path; admission checks by their body (the object), in a map of their own
  // so that the body itself is the key: no longer key is built and hashed on every review.
  let listsInFlight = new Map<string, Promise<ConstraintQueryResult>>();
  let checksInFlight = new Map<string, Promise<ConstraintQueryResult>>();
  let started = 0;
  return {
    query(query: ControllerQuery): Promise<ConstraintQueryResult> {
      const listQuery = listQueryOf(query);
      const inFlight = listQuery ? listsInFlight : checksInFlight;
      const key = listQuery ? constraintQueryPath('', listQuery) : (query.checkBody ?? '');
      const pending = inFlight.get(key);
      if (pending) return pending;
      const sent = client.query(query).finally(() => inFlight.delete(key));
      inFlight.set(key, sent);
      if (++started % MAP_GENERATION === 0) {
        listsInFlight = new Map();
        checksInFlight = new Map();
      }
      return sent;
    },
    close: () => client.close(),
  };
}
