// What the workloads-at-risk e2e files share: kubectl that fails loudly, and the risks of a
// namespace as the controller's API answers them.
import type { Cluster } from './harness';

export interface RiskWorkload {
  kind: string;
  name: string;
  outcome: string;
  findings: Array<{ name: string; verdict: string; evidence: unknown[] }>;
}

export interface NamespaceRisks {
  evaluated: boolean;
  pending: number;
  workloads: RiskWorkload[];
}

/** Runs kubectl and returns its output; throws with its error text when it fails. */
export async function kubectlOk(cluster: Cluster, args: string[], stdin?: string): Promise<string> {
  const result = await cluster.kubectl(args, stdin === undefined ? {} : { stdin });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** `GET /resources/risks/{namespace}` of the controller at `baseUrl`. */
export async function risksOf(baseUrl: string, namespace: string): Promise<NamespaceRisks> {
  const response = await fetch(`${baseUrl}/resources/risks/${namespace}`);
  if (response.status !== 200) throw new Error(`risks of ${namespace}: HTTP ${response.status}`);
  return (await response.json()) as NamespaceRisks;
}
