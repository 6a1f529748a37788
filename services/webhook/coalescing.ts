import { constraintQueryPath, type ConstraintQuery } from '../model/admission-query';
import type { ConstraintQueryResult, ControllerClient } from './controller-client';

// Identical admission reviews arrive together (a ReplicaSet creating fifty equal pods, a rollout
// across replicas): they share one controller query that is already in flight instead of sending
// fifty. Every review still gets an answer computed after it arrived — nothing is cached once the
// query settles — so freshness is what querying per review gives, at a fraction of the cost
// (docs/benchmarks.md: about 1.75x throughput at 16 concurrent reviews).

export function coalesceIdenticalQueries(client: ControllerClient): ControllerClient {
  const inFlight = new Map<string, Promise<ConstraintQueryResult>>();
  return {
    query(query: ConstraintQuery): Promise<ConstraintQueryResult> {
      // Identical admission-check bodies share a query too; the body is the object, so it is the key.
      const key = query.checkBody === undefined ? constraintQueryPath('', query) : `POST ${query.checkBody}`;
      const pending = inFlight.get(key);
      if (pending) return pending;
      const started = client.query(query).finally(() => inFlight.delete(key));
      inFlight.set(key, started);
      return started;
    },
    close: () => client.close(),
  };
}
