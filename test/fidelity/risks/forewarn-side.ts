import type { KubernetesObject } from '../../../services/model/kubernetes';
import { checkedEntry } from '../../../services/controller/verdicts/admission-check';
import { keepWorkload, rolloutVerdicts } from '../../../services/controller/risks/workload-risk';
import { indexObjects } from '../../support/controller-fixtures';
import type { ControllerApi } from '../../e2e/forewarn-support';
import { NAMESPACES } from './inventory';
import { setPair, workloadKey, type EngineVerdict, type PairVerdicts, type ServerAnswer } from './oracles';

// Forewarn's side of risks-agreement.test.ts: the verdicts of the workloads at risk's own evaluation
// (every verdict kept, `unknown`s included, which the risk view does not show), the controller's
// risks to hold them against, and the engines' answers as pairs beside Forewarn's.

export interface ForewarnPair {
  verdict: EngineVerdict;
  /** Whether the finding would reject the workload (a denying source), for the at-risk set. */
  rejects: boolean;
}

/** Forewarn's verdict per engine, policy and workload: the risks' own evaluation, every verdict kept. */
export function forewarnVerdicts(
  stored: readonly KubernetesObject[],
  manifests: readonly KubernetesObject[],
): Map<string, Map<string, Map<string, ForewarnPair>>> {
  const { index } = indexObjects(stored);
  const byEngine = new Map<string, Map<string, Map<string, ForewarnPair>>>();
  for (const manifest of manifests)
    for (const { constraint, verdict } of rolloutVerdicts(index, keepWorkload(manifest))) {
      const namespace = String(manifest.metadata?.namespace);
      const entry = checkedEntry(constraint, verdict, manifest, { level: 'full', namespace });
      const engine = engineOf(entry.sourceKind, entry.sourceApiVersion);
      if (!engine) continue;
      const policy =
        engine === 'api-server'
          ? entry.sourceKind === 'Namespace'
            ? 'psa'
            : `vap:${entry.sourceName}`
          : entry.name;
      const decided: EngineVerdict =
        verdict.verdict === 'violates' ? 'violates' : verdict.verdict === 'passes' ? 'passes' : 'undecided';
      const policies = byEngine.get(engine) ?? new Map<string, Map<string, ForewarnPair>>();
      byEngine.set(engine, policies);
      const pairs = policies.get(policy) ?? new Map<string, ForewarnPair>();
      policies.set(policy, pairs);
      const previous = pairs.get(workloadKey(manifest));
      if (previous?.verdict === 'violates') continue;
      pairs.set(workloadKey(manifest), {
        verdict: decided,
        rejects: decided === 'violates' && (entry.effect === 'deny' || entry.effect === 'limit'),
      });
    }
  return byEngine;
}

function engineOf(sourceKind: string, sourceApiVersion: string): string | undefined {
  if (sourceKind === 'ValidatingAdmissionPolicyBinding' || sourceKind === 'Namespace') return 'api-server';
  if (sourceApiVersion.startsWith('kyverno.io/')) return 'kyverno';
  if (sourceApiVersion.startsWith('constraints.gatekeeper.sh/')) return 'gatekeeper';
  return undefined;
}

interface RiskEntry {
  kind: string;
  namespace: string;
  name: string;
  findings: Array<{ name: string; verdict: string }>;
}

/** The controller's workloads at risk: `<kind>/<namespace>/<name> <constraint>` of each finding. */
export async function controllerRisks(api: ControllerApi): Promise<{ settled: boolean; findings: string[] }> {
  const findings: string[] = [];
  let settled = true;
  for (const namespace of NAMESPACES) {
    const response = await fetch(`${api.baseUrl}/resources/risks/${namespace}`);
    if (response.status !== 200) throw new Error(`risks of ${namespace}: HTTP ${response.status}`);
    const report = (await response.json()) as { evaluated: boolean; pending: number; workloads: RiskEntry[] };
    settled &&= report.evaluated && report.pending === 0;
    for (const workload of report.workloads)
      for (const finding of workload.findings)
        findings.push(`${workload.kind}/${workload.namespace}/${workload.name} ${finding.name}`);
  }
  return { settled, findings: findings.sort() };
}

export function forewarnFindings(
  stored: readonly KubernetesObject[],
  manifests: readonly KubernetesObject[],
): string[] {
  const { index } = indexObjects(stored);
  return manifests
    .flatMap((manifest) =>
      rolloutVerdicts(index, keepWorkload(manifest))
        .filter(({ verdict }) => verdict.verdict === 'violates')
        .map(
          ({ constraint, verdict }) =>
            `${workloadKey(manifest)} ${checkedEntry(constraint, verdict, manifest, { level: 'full', namespace: String(manifest.metadata?.namespace) }).name}`,
        ),
    )
    .sort();
}

/** The server's answers as pairs: every policy it names violates; the others Forewarn lists pass. */
export function serverPairs(
  answers: ReadonlyMap<string, ServerAnswer>,
  forewarn: ReadonlyMap<string, ReadonlyMap<string, ForewarnPair>>,
): PairVerdicts {
  const pairs: PairVerdicts = new Map();
  for (const [workload, answer] of answers) {
    for (const policy of answer.warnedBy) setPair(pairs, policy, workload, 'violates');
    for (const [policy, byWorkload] of forewarn)
      if (byWorkload.has(workload) && !answer.warnedBy.has(policy))
        setPair(pairs, policy, workload, 'passes');
  }
  return pairs;
}

export function gatorPairs(
  violations: ReadonlyMap<string, ReadonlySet<string>>,
  forewarn: ReadonlyMap<string, ReadonlyMap<string, ForewarnPair>>,
): PairVerdicts {
  const pairs: PairVerdicts = new Map();
  for (const [constraint, workloadsViolating] of violations)
    for (const workload of workloadsViolating) setPair(pairs, constraint, workload, 'violates');
  for (const [constraint, byWorkload] of forewarn)
    for (const workload of byWorkload.keys())
      if (!violations.get(constraint)?.has(workload)) setPair(pairs, constraint, workload, 'passes');
  return pairs;
}

/** The workloads the server rejects on their rollout against those Forewarn says a denying source rejects. */
export function rejectionDifferences(
  answers: ReadonlyMap<string, ServerAnswer>,
  forewarn: ReadonlyMap<string, ReadonlyMap<string, ForewarnPair>>,
): string[] {
  return [...answers].flatMap(([workload, answer]) => {
    const rejecting = [...forewarn]
      .filter(([, byWorkload]) => byWorkload.get(workload)?.rejects)
      .map(([policy]) => policy);
    const agrees = answer.rejectedBy ? rejecting.includes(answer.rejectedBy) : rejecting.length === 0;
    if (agrees) return [];
    return [
      `${workload}: server ${answer.rejectedBy ?? 'admits'}, Forewarn rejects by [${rejecting.join(', ')}]`,
    ];
  });
}
