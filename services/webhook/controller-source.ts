import { batchConcurrentChecks, type CheckBatchingOptions } from './check-batching';
import { coalesceIdenticalQueries } from './coalescing';
import {
  createControllerClient,
  type ControllerClient,
  type ControllerClientOptions,
} from './controller-client';

/**
 * The controller as the webhook asks it: identical queries in flight share one request
 * (coalescing.ts), and checks that arrive while one is in flight go together (check-batching.ts).
 * The webhook, its benchmarks and the equivalence test over recorded reviews use this one wiring.
 */
export function createControllerSource(
  options: ControllerClientOptions,
  batching: Pick<CheckBatchingOptions, 'observeBatch'> = {},
): ControllerClient {
  return coalesceIdenticalQueries(batchConcurrentChecks(createControllerClient(options), batching));
}
