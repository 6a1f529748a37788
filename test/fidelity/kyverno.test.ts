import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { buildAdmissionCheck } from '../../services/controller/verdicts/admission-check';
import { indexObjects } from '../support/controller-fixtures';
import { realworldDirectory } from '../support/realworld-corpus';
import { applyBatch, batches, corpusPolicies, type CorpusPolicy, type OracleResults } from './kyverno-oracle';

// Fidelity against the real Kyverno CLI (issue 21): every policy of the shared corpus with validate
// rules, on the workloads of test/fidelity/workloads, through `kyverno apply --policy-report` and
// through Forewarn's verdicts. A pair Kyverno decides (pass or fail) that Forewarn decides otherwise,
// or does not list, and a pair Forewarn decides or lists that Kyverno does not match, fails the test
// unless test/fidelity/kyverno-allow-list.yaml names it with its reason. Prints agreement and
// coverage. Run with `npm run test:fidelity` (test/fidelity/run.sh builds the CLI first).

const KYVERNO = process.env.FOREWARN_KYVERNO_BIN ?? '';
const REALWORLD = realworldDirectory();
const WORKLOADS = path.join(__dirname, 'workloads');
const ALLOW_LIST = path.join(__dirname, 'kyverno-allow-list.yaml');
const BATCH_SIZE = 40;

interface AllowedDisagreement {
  rule: string;
  workload: string;
  kyverno: string;
  forewarn: string;
  reason: string;
}

interface AllowedCliFailure {
  file: string;
  reason: string;
}

interface CliFailure {
  file: string;
  error: string;
}

interface Disagreement {
  rule: string;
  workload: string;
  kyverno: string;
  forewarn: string;
  file: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function workloadFiles(): string[] {
  return readdirSync(WORKLOADS)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => path.join(WORKLOADS, file));
}

function workloads(): KubernetesObject[] {
  return workloadFiles().flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8')).map((document) => document.toJSON() as KubernetesObject),
  );
}

const workloadKey = (object: KubernetesObject) =>
  `${object.kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

function ruleKeys(policy: KubernetesObject): string[] {
  const name = policy.metadata?.name ?? '';
  if (policy.kind === 'ValidatingPolicy') return [name];
  const spec = isRecord(policy.spec) ? policy.spec : {};
  const rules = Array.isArray(spec.rules) ? spec.rules.filter(isRecord) : [];
  return rules.map((rule) => `${name}/${String(rule.name)}`);
}

const NAMESPACES: KubernetesObject[] = ['team', 'default'].map((name) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name },
}));

const POLICY_KINDS = new Set(['ClusterPolicy', 'Policy', 'ValidatingPolicy']);

/**
 * Forewarn's verdict per rule and workload, with the reason of `unknown` verdicts. One index per
 * policy: the verdicts of a policy do not depend on the others, and a busy CI machine then never
 * reaches the per-object evaluation deadline meant for the webhook.
 */
function forewarnVerdicts(batch: readonly CorpusPolicy[], objects: readonly KubernetesObject[]) {
  const verdicts = new Map<string, Map<string, { verdict: string; reason?: string }>>();
  for (const policy of batch) addPolicyVerdicts(policy, objects, verdicts);
  return verdicts;
}

function addPolicyVerdicts(
  policy: CorpusPolicy,
  objects: readonly KubernetesObject[],
  verdicts: Map<string, Map<string, { verdict: string; reason?: string }>>,
): void {
  const { index } = indexObjects([...NAMESPACES, policy.object]);
  for (const object of objects) {
    const check = buildAdmissionCheck(index, { object, operation: 'CREATE' });
    for (const entry of check.constraints) {
      if (!POLICY_KINDS.has(entry.sourceKind)) continue;
      const byWorkload = verdicts.get(entry.name) ?? new Map<string, { verdict: string; reason?: string }>();
      verdicts.set(entry.name, byWorkload);
      const reason = (entry as { reason?: string }).reason;
      byWorkload.set(workloadKey(object), { verdict: entry.verdict, ...(reason ? { reason } : {}) });
    }
  }
}

/**
 * Kyverno's results for a batch. A policy the CLI cannot run (it panics on an apiCall without a
 * cluster) stops its whole batch: the batch is halved until the failing policies stand alone, so one
 * of them costs a few calls rather than one per policy of its batch.
 */
interface OracleAnswer {
  results: OracleResults;
  failed: CliFailure[];
}

async function oracle(
  batch: CorpusPolicy[],
  work: string,
  label: string,
  files: string[],
): Promise<OracleAnswer> {
  const answer = await applyBatch(KYVERNO, batch, files, work, label);
  if ('results' in answer) return { results: answer.results, failed: [] };
  if (batch.length === 1)
    return {
      results: new Map() as OracleResults,
      failed: [{ file: batch[0].file, error: answer.error }],
    };
  const middle = Math.ceil(batch.length / 2);
  const halves = await Promise.all([
    oracle(batch.slice(0, middle), work, `${label}-a`, files),
    oracle(batch.slice(middle), work, `${label}-b`, files),
  ]);
  const results: OracleResults = new Map();
  for (const half of halves) for (const [key, value] of half.results) results.set(key, value);
  return { results, failed: halves.flatMap((half) => half.failed) };
}

type Counts = Record<
  | 'pairs'
  | 'kyvernoDecided'
  | 'bothDecided'
  | 'agreed'
  | 'unknown'
  | 'notListed'
  | 'listedNotMatched'
  | 'kyvernoErrors'
  | 'allowListed',
  number
>;

/** Counts one pair; true when it is a disagreement. */
function comparePair(
  counts: Counts,
  unknownReasons: Map<string, number>,
  kyverno: string,
  ours: { verdict: string; reason?: string } | undefined,
): boolean {
  const verdict = ours?.verdict ?? 'none';
  counts.pairs++;
  if (kyverno === 'pass' || kyverno === 'fail') {
    counts.kyvernoDecided++;
    if (verdict === 'passes' || verdict === 'violates') {
      counts.bothDecided++;
      if ((kyverno === 'pass') === (verdict === 'passes')) {
        counts.agreed++;
        return false;
      }
      return true;
    }
    if (verdict === 'none') {
      counts.notListed++;
      return true;
    }
    counts.unknown++;
    const reason = (ours?.reason ?? verdict).replace(/".*?"/g, '"…"').slice(0, 90);
    unknownReasons.set(reason, (unknownReasons.get(reason) ?? 0) + 1);
    return false;
  }
  if (kyverno === 'error' || kyverno === 'warn') {
    counts.kyvernoErrors++;
    return false;
  }
  // Kyverno skips (preconditions) or does not match: Forewarn must not decide, nor list an unmatched rule.
  if (verdict === 'passes' || verdict === 'violates' || (kyverno === 'none' && verdict !== 'none')) {
    counts.listedNotMatched++;
    return true;
  }
  return false;
}

/** Compares every pair of the policies the CLI could run; the counts and the disagreements. */
function compareAll(
  policyBatches: readonly CorpusPolicy[][],
  answers: readonly OracleAnswer[],
  objects: readonly KubernetesObject[],
  allowed: readonly AllowedDisagreement[],
  failedFiles: ReadonlySet<string>,
) {
  const counts: Counts = {
    pairs: 0,
    kyvernoDecided: 0,
    bothDecided: 0,
    agreed: 0,
    unknown: 0,
    notListed: 0,
    listedNotMatched: 0,
    kyvernoErrors: 0,
    allowListed: 0,
  };
  const unknownReasons = new Map<string, number>();
  const disagreements: Disagreement[] = [];
  for (const [batchIndex, batch] of policyBatches.entries()) {
    const { results } = answers[batchIndex];
    const forewarn = forewarnVerdicts(batch, objects);
    // A policy the CLI cannot run has no oracle: its pairs are not compared (the allow-list says why).
    for (const policy of batch.filter((candidate) => !failedFiles.has(candidate.file))) {
      for (const rule of ruleKeys(policy.object)) {
        for (const object of objects) {
          const workload = workloadKey(object);
          const kyverno = results.get(rule)?.get(workload) ?? 'none';
          const ours = forewarn.get(rule)?.get(workload);
          const verdict = ours?.verdict ?? 'none';
          const problem = comparePair(counts, unknownReasons, kyverno, ours);
          if (!problem) continue;
          const entry = { rule, workload, kyverno, forewarn: verdict, file: policy.file };
          const listed = allowed.some(
            (allowance) =>
              allowance.rule === rule &&
              (allowance.workload === '*' || allowance.workload === workload) &&
              allowance.kyverno === kyverno &&
              allowance.forewarn === verdict,
          );
          if (listed) counts.allowListed++;
          else disagreements.push(entry);
        }
      }
    }
  }
  return { counts, unknownReasons, disagreements };
}

/** One line per rule and kind of disagreement, so a long list reads at a glance. */
function disagreementSummary(disagreements: readonly Disagreement[]): string[] {
  const groups = new Map<string, number>();
  for (const entry of disagreements) {
    const key = `${entry.rule} (kyverno ${entry.kyverno}, forewarn ${entry.forewarn})`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return [...groups.entries()]
    .sort((left, right) => right[1] - left[1])
    .map(([key, count]) => `  disagreement x${count}: ${key}`);
}

const percent = (part: number, whole: number) =>
  whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)}%`;

describe('Forewarn against the Kyverno CLI on the shared corpus', () => {
  it('decides what Kyverno decides, the same way', async () => {
    expect(existsSync(KYVERNO)).toBe(true); // FOREWARN_KYVERNO_BIN: run through test/fidelity/run.sh
    expect(REALWORLD).toBeDefined(); // ../shared/realworld (or FOREWARN_REALWORLD_DIR)
    const allowList = parse(readFileSync(ALLOW_LIST, 'utf8')) as {
      disagreements?: AllowedDisagreement[];
      cliFailures?: AllowedCliFailure[];
    };
    const allowed = allowList.disagreements ?? [];
    const objects = workloads();
    const files = workloadFiles();
    const policies = corpusPolicies(path.join(REALWORLD!, 'policies/kyverno'));
    const work = mkdtempSync(path.join(os.tmpdir(), 'forewarn-fidelity-kyverno-'));
    let answers: OracleAnswer[];
    const policyBatches = batches(policies, BATCH_SIZE);
    const started = Date.now();
    try {
      answers = await Promise.all(
        policyBatches.map((batch, index) => oracle(batch, work, `batch-${index}`, files)),
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    const oracleSeconds = (Date.now() - started) / 1000;
    const cliFailures = answers.flatMap((answer) => answer.failed);
    const failedFiles = new Set(cliFailures.map((failure) => failure.file));
    const { counts, unknownReasons, disagreements } = compareAll(
      policyBatches,
      answers,
      objects,
      allowed,
      failedFiles,
    );
    const unexplainedFailures = cliFailures.filter(
      (failure) => !(allowList.cliFailures ?? []).some((allowance) => allowance.file === failure.file),
    );
    const lines = [
      `Kyverno fidelity: ${policies.length} policies, ${counts.pairs} rule x workload pairs (${objects.length} workloads)`,
      `  Kyverno decides (pass/fail): ${counts.kyvernoDecided}; Forewarn decides ${counts.bothDecided} of them (${percent(counts.bothDecided, counts.kyvernoDecided)})`,
      `  agreement on pairs both decide: ${counts.agreed}/${counts.bothDecided} (${percent(counts.agreed, counts.bothDecided)}; the others are reviewed CLI-only differences in the allow-list)`,
      `  Forewarn unknown where Kyverno decides: ${counts.unknown}; not listed: ${counts.notListed}; listed where Kyverno does not match or skips: ${counts.listedNotMatched}`,
      `  Kyverno errors/warnings (not compared): ${counts.kyvernoErrors}; allow-listed disagreements: ${counts.allowListed}`,
      ...[...unknownReasons.entries()]
        .sort((left, right) => right[1] - left[1])
        .slice(0, 12)
        .map(([reason, count]) => `  unknown x${count}: ${reason}`),
      `  kyverno apply: ${oracleSeconds.toFixed(1)} s for ${policyBatches.length} batches; CLI failures (pairs not compared): ${cliFailures.map((failure) => failure.file).join(', ') || 'none'}`,
      ...disagreementSummary(disagreements),
    ];
    console.log(lines.join('\n'));
    expect(unexplainedFailures).toEqual([]);
    expect(disagreements).toEqual([]);
  });
});
