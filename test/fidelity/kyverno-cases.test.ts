import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubernetesObject } from '../../services/model/kubernetes';
import type { AdmissionOperation, Requester } from '../../services/controller/verdicts/types';
import { buildAdmissionCheck } from '../../services/controller/verdicts/admission-check';
import { indexObjects } from '../support/controller-fixtures';
import { applyBatch, corpusPolicies, type OracleResults } from './kyverno-oracle';

// Fidelity against the Kyverno CLI on Forewarn's own cases (test/fidelity/kyverno-cases/): rules that
// depend on who asks (subjects, clusterRoles), on the operation, on versioned kinds (no
// auto-generation), on the object's own labels, and on quantity arithmetic (sum, divide), plus a
// ValidatingPolicy reading object.metadata.namespace through auto-generation. Each scenario runs
// `kyverno apply` with a requester (--userinfo) and an operation (--values-file), and Forewarn's
// admission check with what the webhook's AdmissionReview says: the user name and groups, not the
// roles bound to them. Every pair both decide must agree, nothing Kyverno does not apply may be
// listed with a verdict (an `unknown` that says whether the rule applies is not known is counted
// apart), and Forewarn must decide at least 97% of the pairs Kyverno decides.

const KYVERNO = process.env.FOREWARN_KYVERNO_BIN ?? '';
const CASES = path.join(__dirname, 'kyverno-cases');
const WORKLOADS = path.join(CASES, 'workloads.yaml');

interface Scenario {
  name: string;
  operation: AdmissionOperation;
  /** What the AdmissionReview carries, and so what Forewarn's webhook knows. */
  requester: Requester;
  /** Roles the API server's RBAC binds to the requester: Kyverno reads them, Forewarn does not. */
  clusterRoles: string[];
}

const SCENARIOS: Scenario[] = [
  {
    name: 'a developer creates',
    operation: 'CREATE',
    requester: { username: 'dana', groups: ['developers', 'system:authenticated'] },
    clusterRoles: [],
  },
  {
    name: 'the release pipeline creates',
    operation: 'CREATE',
    requester: {
      username: 'system:serviceaccount:ci:release-bot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'],
    },
    clusterRoles: [],
  },
  {
    name: 'an administrator updates',
    operation: 'UPDATE',
    requester: { username: 'ops-admin', groups: ['system:masters', 'system:authenticated'] },
    clusterRoles: ['cluster-admin'],
  },
];

const NAMESPACES: KubernetesObject[] = ['team', 'platform'].map((name) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name },
}));

const workloadKey = (object: KubernetesObject) =>
  `${object.kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

function workloads(): KubernetesObject[] {
  return parseAllDocuments(readFileSync(WORKLOADS, 'utf8')).map(
    (document) => document.toJSON() as KubernetesObject,
  );
}

function ruleKeys(policy: KubernetesObject): string[] {
  const name = policy.metadata?.name ?? '';
  if (policy.kind === 'ValidatingPolicy') return [name];
  const spec = policy.spec as { rules?: Array<{ name: string }> };
  return (spec.rules ?? []).map((rule) => `${name}/${rule.name}`);
}

/** Forewarn's verdicts for one scenario: rule → workload → verdict. */
function forewarnVerdicts(
  policies: readonly KubernetesObject[],
  objects: readonly KubernetesObject[],
  scenario: Scenario,
) {
  const { index } = indexObjects([...NAMESPACES, ...policies]);
  const verdicts = new Map<string, Map<string, string>>();
  for (const object of objects) {
    const check = buildAdmissionCheck(index, {
      object,
      operation: scenario.operation,
      ...(scenario.operation === 'UPDATE' ? { oldObject: object } : {}),
      requester: scenario.requester,
    });
    for (const entry of check.constraints) {
      if (!['ClusterPolicy', 'ValidatingPolicy'].includes(entry.sourceKind)) continue;
      const byWorkload = verdicts.get(entry.name) ?? new Map<string, string>();
      verdicts.set(entry.name, byWorkload);
      byWorkload.set(workloadKey(object), entry.verdict);
    }
  }
  return verdicts;
}

/** The CLI's inputs for a scenario: who asks and the operation. */
function scenarioArguments(scenario: Scenario, directory: string): string[] {
  const userInfo = path.join(directory, 'userinfo.yaml');
  writeFileSync(
    userInfo,
    stringify({
      apiVersion: 'cli.kyverno.io/v1alpha1',
      kind: 'UserInfo',
      metadata: { name: 'requester' },
      clusterRoles: scenario.clusterRoles,
      userInfo: { username: scenario.requester.username, groups: scenario.requester.groups },
    }),
  );
  const values = path.join(directory, 'values.yaml');
  writeFileSync(
    values,
    stringify({
      apiVersion: 'cli.kyverno.io/v1alpha1',
      kind: 'Values',
      metadata: { name: 'operation' },
      globalValues: { 'request.operation': scenario.operation },
    }),
  );
  return ['--userinfo', userInfo, '--values-file', values];
}

interface Counts {
  kyvernoDecided: number;
  bothDecided: number;
  agreed: number;
  unknown: number;
  /** Pairs Kyverno does not apply the rule to, that Forewarn cannot tell apart (`unknown`). */
  undecidedWhetherApplies: number;
}

describe('Forewarn against the Kyverno CLI on its own cases', () => {
  it('decides what Kyverno decides, the same way, for each requester and operation', async () => {
    expect(existsSync(KYVERNO)).toBe(true); // FOREWARN_KYVERNO_BIN: run through test/fidelity/run.sh
    const policies = corpusPolicies(path.join(CASES, 'policies'));
    const objects = workloads();
    const counts: Counts = {
      kyvernoDecided: 0,
      bothDecided: 0,
      agreed: 0,
      unknown: 0,
      undecidedWhetherApplies: 0,
    };
    const problems: string[] = [];
    const work = mkdtempSync(path.join(os.tmpdir(), 'forewarn-fidelity-kyverno-cases-'));
    try {
      for (const [index, scenario] of SCENARIOS.entries()) {
        const directory = path.join(work, `scenario-${index}`);
        mkdirSync(directory, { recursive: true });
        const extra = scenarioArguments(scenario, directory);
        const answer = await applyBatch(KYVERNO, policies, [WORKLOADS], work, `policies-${index}`, extra);
        if ('error' in answer) throw new Error(`kyverno apply failed (${scenario.name}): ${answer.error}`);
        const results: OracleResults = answer.results;
        const ours = forewarnVerdicts(
          policies.map((policy) => policy.object),
          objects,
          scenario,
        );
        for (const rule of policies.flatMap((policy) => ruleKeys(policy.object)))
          for (const object of objects) {
            const workload = workloadKey(object);
            const kyverno = results.get(rule)?.get(workload) ?? 'none';
            const verdict = ours.get(rule)?.get(workload) ?? 'none';
            const pair = `${scenario.name}: ${rule} on ${workload}: kyverno ${kyverno}, forewarn ${verdict}`;
            if (kyverno === 'pass' || kyverno === 'fail') {
              counts.kyvernoDecided++;
              if (verdict === 'unknown') counts.unknown++;
              else if (verdict === 'none') problems.push(`${pair} (not listed)`);
              else {
                counts.bothDecided++;
                if ((kyverno === 'pass') === (verdict === 'passes')) counts.agreed++;
                else problems.push(pair);
              }
            } else if (kyverno !== 'error' && kyverno !== 'warn') {
              // `unknown` says Forewarn cannot tell whether the rule applies (roles it does not read).
              if (verdict === 'unknown') counts.undecidedWhetherApplies++;
              else if (verdict !== 'none')
                problems.push(`${pair} (listed where Kyverno does not apply the rule)`);
            }
          }
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    const percent = (part: number, whole: number) =>
      whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)}%`;
    console.log(
      [
        `Kyverno cases: ${SCENARIOS.length} scenarios; Kyverno decides ${counts.kyvernoDecided} pairs, Forewarn ${counts.bothDecided} of them (${percent(counts.bothDecided, counts.kyvernoDecided)})`,
        `  agreement: ${counts.agreed}/${counts.bothDecided}; unknown where Kyverno decides: ${counts.unknown}; unknown where Kyverno does not apply the rule: ${counts.undecidedWhetherApplies}`,
        ...problems.map((problem) => `  ${problem}`),
      ].join('\n'),
    );
    expect(problems).toEqual([]);
    expect(counts.agreed).toBe(counts.bothDecided);
    expect(counts.bothDecided / counts.kyvernoDecided).toBeGreaterThanOrEqual(0.97);
  });
});
