import { randomBytes } from 'node:crypto';
import type { Cluster, ProcessResult } from './harness';

// The API server enforces what a test creates only once its own informers have seen it: admission
// policies and their bindings are compiled by a background refresh, a binding's params come from a
// param informer, Pod Security reads namespace labels from a lister. A test that applies objects right
// after creating policies races those informers (issue 36: a binding was "admitted" that the server
// enforced a moment later). Tests call `waitUntilEnforced` after creating policies and before applying
// the objects they compare, so the comparison starts from a server that enforces everything.

/** One thing that must hold before a test compares: a dry-run create of `object` answered as `inForce` says. */
export interface EnforcementProbe {
  /** Named when the wait fails, e.g. `binding max-replicas rejects 5 replicas`. */
  description: string;
  object: unknown;
  /** Whether the server's answer to a dry-run create of `object` shows the policy in force. */
  inForce(result: ProcessResult): boolean;
}

export interface EnforcementOptions {
  /** The whole wait's budget (default 90 s: the API server refreshes policies within seconds, slower under load). */
  budgetMs?: number;
  /** Pause between rounds of probes (default 250 ms). */
  intervalMs?: number;
}

/** A rejection whose message matches `pattern` (the policy's own words, not any rejection). */
export const rejectedWith =
  (pattern: RegExp) =>
  (result: ProcessResult): boolean =>
    result.code !== 0 && pattern.test(result.stderr);

/** Admitted: for probes that show a param or an exemption has reached the server. */
export const admittedByServer = (result: ProcessResult): boolean => result.code === 0;

/** The API server's words when a ValidatingAdmissionPolicy binding denies a request. */
export const bindingDenial = (binding: string): RegExp =>
  new RegExp(`ValidatingAdmissionPolicy '[^']+' with binding '${escapeRegExp(binding)}' denied request`);

/** The API server's words when Pod Security Admission rejects a Pod. */
export const podSecurityDenial = (level: string): RegExp =>
  new RegExp(`violates PodSecurity "${escapeRegExp(level)}:`);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const SENTINEL_LABEL = 'forewarn.e2e/enforcement-sentinel';

/**
 * A policy and binding created after everything the test created, denying only a ConfigMap labelled
 * with a token of its own. The server's policy source lists all policies and bindings from its
 * informers on each refresh, and an informer delivers one resource's events in the order they were
 * written: once the sentinel is enforced, every policy and binding written before it is too (and every
 * one deleted before it is gone). The probes of the test then cover what the sentinel cannot: params,
 * namespace labels, other admission plugins.
 */
function sentinel(): { objects: unknown[]; probe: EnforcementProbe; name: string } {
  const token = randomBytes(6).toString('hex');
  const name = `forewarn-e2e-sentinel-${token}`;
  return {
    name,
    objects: [
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
            ],
          },
          validations: [{ expression: 'false', message: `enforcement sentinel ${token}` }],
        },
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name },
        spec: {
          policyName: name,
          validationActions: ['Deny'],
          matchResources: { objectSelector: { matchLabels: { [SENTINEL_LABEL]: token } } },
        },
      },
    ],
    probe: {
      description: `the sentinel policy ${name}, created after the test's policies`,
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'enforcement-probe', namespace: 'default', labels: { [SENTINEL_LABEL]: token } },
      },
      inForce: rejectedWith(bindingDenial(name)),
    },
  };
}

function outcomeText(result: ProcessResult | undefined): string {
  if (result === undefined) return 'not probed yet';
  if (result.code === 0) return 'admitted';
  return `rejected: ${result.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 300) ?? ''}`;
}

/**
 * Waits until the server enforces everything created so far: first a sentinel policy created now,
 * then each probe of the test (probed together, each until it holds once). Fails with the probes that
 * never held and the server's last answer to each when the budget runs out.
 */
export async function waitUntilEnforced(
  cluster: Cluster,
  probes: readonly EnforcementProbe[],
  options: EnforcementOptions = {},
): Promise<void> {
  const budgetMs = options.budgetMs ?? 90_000;
  const intervalMs = options.intervalMs ?? 250;
  const deadline = Date.now() + budgetMs;
  const guard = sentinel();
  const created = await cluster.kubectl(['apply', '-f', '-'], {
    stdin: guard.objects.map((object) => JSON.stringify(object)).join('\n'),
  });
  if (created.code !== 0) throw new Error(`creating the enforcement sentinel failed: ${created.stderr}`);
  try {
    await probeUntilInForce(cluster, [guard.probe], deadline, budgetMs, intervalMs);
  } finally {
    // The sentinel only ever denies its own labelled ConfigMap; it goes once it has served.
    await cluster.kubectl([
      'delete',
      'validatingadmissionpolicybinding,validatingadmissionpolicy',
      guard.name,
      '--wait=false',
      '--ignore-not-found',
    ]);
  }
  await probeUntilInForce(cluster, probes, deadline, budgetMs, intervalMs);
}

async function probeUntilInForce(
  cluster: Cluster,
  probes: readonly EnforcementProbe[],
  deadline: number,
  budgetMs: number,
  intervalMs: number,
): Promise<void> {
  const pending = new Map<EnforcementProbe, ProcessResult | undefined>(
    probes.map((probe) => [probe, undefined]),
  );
  for (;;) {
    for (const probe of [...pending.keys()]) {
      const result = await cluster.kubectl(['create', '--dry-run=server', '-f', '-'], {
        stdin: JSON.stringify(probe.object),
      });
      if (probe.inForce(result)) pending.delete(probe);
      else pending.set(probe, result);
    }
    if (pending.size === 0) return;
    if (Date.now() >= deadline) {
      const lines = [...pending].map(([probe, result]) => `  - ${probe.description}: ${outcomeText(result)}`);
      throw new Error(
        `the API server did not enforce the test's policies within ${budgetMs} ms; not in force:\n` +
          `${lines.join('\n')}\nWhat to do: read the API server log (cluster.apiServerLogPath) for ` +
          'compilation or informer errors; on a loaded machine raise the budget (EnforcementOptions.budgetMs).',
      );
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))),
    );
  }
}
