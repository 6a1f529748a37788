import { constraintQueryPath, type ConstraintQuery } from '../model/admission-query';
import type { ConstraintQueryResult, ControllerClient } from './controller-client';

// Identical admission reviews arrive together (a ReplicaSet creating fifty equal pods, a rollout
// across replicas): they share one controller query that is already in flight instead of sending
// fifty. Every review still gets an answer computed after it arrived — nothing is cached once the
// query settles — so freshness is what querying per review gives, at a fraction of the cost
// (docs/benchmarks.md: about 1.75x throughput at 16 concurrent reviews).

export function coalesceIdenticalQueries(client: ControllerClient): ControllerClient {
  // Label queries by their path; admission checks by their body (the object), in a map of their own
  // so that the body itself is the key: no longer key is built and hashed on every review.
  const listsInFlight = new Map<string, Promise<ConstraintQueryResult>>();
  const checksInFlight = new Map<string, Promise<ConstraintQueryResult>>();
  return {
    query(query: ConstraintQuery): Promise<ConstraintQueryResult> {
      const isCheck = query.checkBody !== undefined;
      const inFlight = isCheck ? checksInFlight : listsInFlight;
      const key = query.checkBody ?? constraintQueryPath('', query);
      const pending = inFlight.get(key);
      if (pending) return pending;
      const started = client.query(query).finally(() => inFlight.delete(key));
      inFlight.set(key, started);
      return started;
    },
    close: () => client.close(),
  };
}
