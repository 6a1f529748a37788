import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubernetesObject } from '../../services/model/kubernetes';

// The Kyverno CLI as the oracle of the fidelity tier: which policies of the corpus have validate
// rules, how they are batched into few `kyverno apply` calls, and what Kyverno's policy report says
// for each rule × workload pair.

const run = promisify(execFile);

export type KyvernoResult = 'pass' | 'fail' | 'skip' | 'error' | 'warn';

export interface CorpusPolicy {
  /** The policy file, relative to the corpus. */
  file: string;
  /** The policy with only its validate rules (what this comparison is about). */
  object: KubernetesObject;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function yamlFiles(directory: string): string[] {
  return readdirSync(directory)
    .sort()
    .flatMap((entry) => {
      const full = path.join(directory, entry);
      if (statSync(full).isDirectory()) return yamlFiles(full);
      return /\.ya?ml$/.test(entry) ? [full] : [];
    });
}

/**
 * Every Kyverno policy of the corpus with validate rules: ClusterPolicy / Policy (kyverno.io) with
 * their other rules removed (kyverno apply would otherwise mutate the workload before validating it),
 * and policies.kyverno.io ValidatingPolicy.
 */
export function corpusPolicies(corpus: string): CorpusPolicy[] {
  return yamlFiles(corpus).flatMap((full) => {
    const documents = parseAllDocuments(readFileSync(full, 'utf8')).map(
      (document) => document.toJSON() as unknown,
    );
    return documents.flatMap((document): CorpusPolicy[] => {
      if (!isRecord(document) || typeof document.apiVersion !== 'string') return [];
      const file = path.relative(corpus, full);
      if (document.apiVersion.startsWith('policies.kyverno.io/') && document.kind === 'ValidatingPolicy')
        return [{ file, object: document as KubernetesObject }];
      if (!document.apiVersion.startsWith('kyverno.io/')) return [];
      if (document.kind !== 'ClusterPolicy' && document.kind !== 'Policy') return [];
      const spec = isRecord(document.spec) ? document.spec : {};
      const rules = Array.isArray(spec.rules)
        ? spec.rules.filter((rule) => isRecord(rule) && isRecord(rule.validate))
        : [];
      if (rules.length === 0) return [];
      return [{ file, object: { ...document, spec: { ...spec, rules } } as KubernetesObject }];
    });
  });
}

const identity = (object: KubernetesObject) =>
  `${object.kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/** Batches of policies in which no two share kind, namespace and name (they would shadow each other). */
export function batches(policies: readonly CorpusPolicy[], size: number): CorpusPolicy[][] {
  const result: Array<{ names: Set<string>; policies: CorpusPolicy[] }> = [];
  for (const policy of policies) {
    const key = identity(policy.object);
    let batch = result.find((candidate) => candidate.policies.length < size && !candidate.names.has(key));
    if (!batch) {
      batch = { names: new Set(), policies: [] };
      result.push(batch);
    }
    batch.names.add(key);
    batch.policies.push(policy);
  }
  return result.map((batch) => batch.policies);
}

/** `<policy>/<rule>` (`<policy>` for a ValidatingPolicy) → `<kind>/<namespace>/<name>` → result. */
export type OracleResults = Map<string, Map<string, KyvernoResult>>;

/** Kyverno names auto-generated rules `autogen-<rule>` and `autogen-cronjob-<rule>`. */
export function baseRuleName(rule: string): string {
  return rule.replace(/^autogen-(cronjob-)?/, '');
}

function collectResults(report: unknown, into: OracleResults): void {
  if (Array.isArray(report)) {
    for (const item of report) collectResults(item, into);
    return;
  }
  if (!isRecord(report)) return;
  if (Array.isArray(report.items)) collectResults(report.items, into);
  if (!Array.isArray(report.results)) return;
  for (const result of report.results) {
    if (!isRecord(result) || typeof result.policy !== 'string') continue;
    const policy = result.policy.includes('/')
      ? result.policy.slice(result.policy.indexOf('/') + 1)
      : result.policy;
    // A ValidatingPolicy's results name no rule; a ClusterPolicy's rule may share its policy's name.
    const rule = typeof result.rule === 'string' && result.rule !== '' ? baseRuleName(result.rule) : '';
    const key = rule ? `${policy}/${rule}` : policy;
    const resources = Array.isArray(result.resources) ? result.resources.filter(isRecord) : [];
    for (const resource of resources) {
      const workload = `${String(resource.kind)}/${String(resource.namespace ?? '')}/${String(resource.name)}`;
      const byWorkload = into.get(key) ?? new Map<string, KyvernoResult>();
      into.set(key, byWorkload);
      const previous = byWorkload.get(workload);
      // An auto-generated rule and its Pod rule report the same workload once; keep the decided one.
      if (previous === 'pass' || previous === 'fail') continue;
      byWorkload.set(workload, result.result as KyvernoResult);
    }
  }
}

/** Runs `kyverno apply` on one batch; the results, or why the batch could not be evaluated. */
export async function applyBatch(
  kyverno: string,
  batch: readonly CorpusPolicy[],
  workloadFiles: readonly string[],
  workDirectory: string,
  label: string,
  /** More `kyverno apply` flags: `--userinfo FILE`, `--values-file FILE` (who asks, the operation). */
  extraArguments: readonly string[] = [],
): Promise<{ results: OracleResults } | { error: string }> {
  const directory = path.join(workDirectory, label);
  mkdirSync(directory, { recursive: true });
  batch.forEach((policy, index) =>
    writeFileSync(path.join(directory, `${String(index).padStart(3, '0')}.yaml`), stringify(policy.object)),
  );
  const args = ['apply', directory, ...workloadFiles.flatMap((file) => ['--resource', file])];
  args.push('--policy-report', '--output-format', 'json', '--continue-on-fail', '--remove-color');
  args.push(...extraArguments);
  let stdout: string;
  try {
    ({ stdout } = await run(kyverno, args, { maxBuffer: 256 * 1024 * 1024, timeout: 300_000 }));
    // A successful run prints no report when no rule of the batch matches any workload.
    if (!stdout.includes('{')) return { results: new Map() };
  } catch (error) {
    // kyverno exits 1 when a policy fails; the report is still on stdout.
    const failed = error as { stdout?: string; stderr?: string; message: string };
    if (!failed.stdout || !failed.stdout.includes('{'))
      return { error: `${failed.message}\n${failed.stderr ?? ''}` };
    stdout = failed.stdout;
  }
  const results: OracleResults = new Map();
  // Several reports (the cluster's and each namespace's) come as documents separated by `---`,
  // after the CLI's warnings.
  stdout = stdout
    .split('\n')
    .filter((line) => line.trim() !== '---' && !line.startsWith('Warning: '))
    .join('\n');
  // The report starts on a line of its own; warnings before it may hold braces of their own.
  const lineStart = stdout.search(/^[{[]/m);
  const from = lineStart === -1 ? stdout.indexOf('{') : lineStart;
  try {
    collectResults(JSON.parse(stdout.slice(from)) as unknown, results);
  } catch {
    // Several JSON documents, one per report.
    for (const line of stdout.slice(from).split(/\n(?=[{[])/)) {
      try {
        collectResults(JSON.parse(line) as unknown, results);
      } catch {
        return { error: `the policy report is not JSON: ${stdout.slice(0, 400)}` };
      }
    }
  }
  return { results };
}
