import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { KubernetesObject } from '../../../services/model/kubernetes';
import { workloadKindNamed, podTemplateOf } from '../../../services/model/workload-kinds';
import type { ApiResponse, Cluster } from '../../e2e/harness';
import { applyBatch, type CorpusPolicy } from '../kyverno-oracle';

// What each engine says of the inventory's workloads on their next rollout, per (workload, policy)
// pair (risks-agreement.test.ts): the Kyverno CLI and gator over the workloads' manifests as the API
// server stores them, and the API server itself through dry-runs of each rollout.

const run = promisify(execFile);

export type EngineVerdict = 'violates' | 'passes' | 'undecided';

/** `<policy key>` → `<kind>/<namespace>/<name>` → what the engine says. */
export type PairVerdicts = Map<string, Map<string, EngineVerdict>>;

export const workloadKey = (object: KubernetesObject): string =>
  `${object.kind ?? ''}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

export function setPair(into: PairVerdicts, policy: string, workload: string, verdict: EngineVerdict): void {
  const byWorkload = into.get(policy) ?? new Map<string, EngineVerdict>();
  into.set(policy, byWorkload);
  // Several answers for one pair (a controller and the pods its rollout creates): a violation wins.
  if (byWorkload.get(workload) === 'violates') return;
  byWorkload.set(workload, verdict);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The kinds the inventory reads back, as kubectl names them. */
export const INVENTORY_RESOURCES = 'deployments,statefulsets,daemonsets,jobs,cronjobs,pods,services';

/**
 * The object as a re-apply sends it: what the user and the server's defaulting wrote, without what
 * the cluster writes about it (status, identity, managed fields, kubectl's copy of the manifest).
 */
export function asManifest(object: KubernetesObject): KubernetesObject {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const annotations = isRecord(metadata.annotations)
    ? Object.fromEntries(
        Object.entries(metadata.annotations).filter(
          ([key]) => key !== 'kubectl.kubernetes.io/last-applied-configuration',
        ),
      )
    : undefined;
  const kept: Record<string, unknown> = {
    name: metadata.name,
    namespace: metadata.namespace,
    ...(isRecord(metadata.labels) ? { labels: metadata.labels } : {}),
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
  const { status: _status, metadata: _metadata, ...rest } = object as Record<string, unknown>;
  return { ...rest, metadata: kept } as KubernetesObject;
}

/** The running workloads: those not represented by an owner (a Deployment's ReplicaSets' Pods). */
export async function readInventory(
  cluster: Cluster,
  namespaces: readonly string[],
): Promise<KubernetesObject[]> {
  const result = await cluster.kubectl(['get', INVENTORY_RESOURCES, '-A', '-o', 'json']);
  if (result.code !== 0) throw new Error(`kubectl get: ${result.stderr}`);
  const items = (JSON.parse(result.stdout) as { items: KubernetesObject[] }).items;
  return items
    .filter((item) => namespaces.includes(String(item.metadata?.namespace)))
    .filter((item) => {
      const owners = isRecord(item.metadata) ? item.metadata.ownerReferences : undefined;
      return !Array.isArray(owners) || owners.length === 0;
    })
    .map(asManifest);
}

/** The Pod a pod controller's rollout creates from its template (named after the controller). */
export function rolloutPod(object: KubernetesObject): KubernetesObject | undefined {
  const kind = workloadKindNamed(object.kind ?? '');
  if (!kind || object.kind === 'Pod') return undefined;
  const template = podTemplateOf(object, kind);
  if (!isRecord(template)) return undefined;
  const metadata = isRecord(template.metadata) ? template.metadata : {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...metadata,
      name: `${String(object.metadata?.name)}-rollout`,
      namespace: object.metadata?.namespace,
    },
    spec: template.spec,
  };
}

// ------------------------------------------------------------------ Kyverno CLI

/** `kyverno apply` of the policies over the manifests: `<policy>/<rule>` pairs it passes or fails. */
export async function kyvernoVerdicts(
  kyverno: string,
  policies: readonly KubernetesObject[],
  manifests: readonly KubernetesObject[],
  workDirectory: string,
): Promise<PairVerdicts> {
  mkdirSync(workDirectory, { recursive: true });
  const resources = path.join(workDirectory, 'workloads.yaml');
  writeFileSync(resources, manifests.map((object) => stringify(object)).join('---\n'));
  const batch: CorpusPolicy[] = policies.map((object, position) => ({ file: String(position), object }));
  const answer = await applyBatch(kyverno, batch, [resources], workDirectory, 'policies');
  if ('error' in answer) throw new Error(`kyverno apply failed: ${answer.error}`);
  const verdicts: PairVerdicts = new Map();
  for (const [rule, byWorkload] of answer.results)
    for (const [workload, result] of byWorkload)
      setPair(
        verdicts,
        rule,
        workload,
        result === 'fail' ? 'violates' : result === 'pass' ? 'passes' : 'undecided',
      );
  return verdicts;
}

// ------------------------------------------------------------------ gator

interface GatorResult {
  constraint: { metadata: { name: string } };
  violatingObject: KubernetesObject;
}

/**
 * `gator test` of the templates and constraints over the manifests and the pods their rollouts
 * create (mapped back to their controller): the violations it reports. gator decides every pair;
 * one it does not report passes.
 */
export async function gatorViolations(
  gator: string,
  gatekeeperObjects: readonly KubernetesObject[],
  namespaces: readonly KubernetesObject[],
  manifests: readonly KubernetesObject[],
  workDirectory: string,
): Promise<Map<string, Set<string>>> {
  mkdirSync(workDirectory, { recursive: true });
  const ownerOfPod = new Map<string, string>();
  const pods = manifests.flatMap((object) => {
    const pod = rolloutPod(object);
    if (pod) ownerOfPod.set(workloadKey(pod), workloadKey(object));
    return pod ? [pod] : [];
  });
  const file = path.join(workDirectory, 'suite.yaml');
  writeFileSync(
    file,
    [...gatekeeperObjects, ...namespaces, ...manifests, ...pods]
      .map((object) => stringify(object))
      .join('---\n'),
  );
  let output: string;
  try {
    const running = run(gator, ['test', '-f', file, '-o', 'json'], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: 300_000,
    });
    // gator reads stdin too when it is not a terminal: it must see its end.
    running.child.stdin?.end();
    ({ stdout: output } = await running);
  } catch (error) {
    // gator exits 1 when it finds violations; its JSON is on stdout either way.
    output = String((error as { stdout?: string }).stdout ?? '');
    if (!output.trim().startsWith('['))
      throw new Error(`gator test failed: ${String((error as { stderr?: string }).stderr ?? error)}`);
  }
  const violations = new Map<string, Set<string>>();
  for (const result of JSON.parse(output.trim() === '' ? '[]' : output) as GatorResult[]) {
    const object = workloadKey(result.violatingObject);
    const workload = ownerOfPod.get(object) ?? object;
    const set = violations.get(result.constraint.metadata.name) ?? new Set<string>();
    set.add(workload);
    violations.set(result.constraint.metadata.name, set);
  }
  return violations;
}

// ------------------------------------------------------------------ the API server

/** What the server answered to a workload's rollout. */
export interface ServerAnswer {
  /** `vap:<binding>` or `psa` of the rejection, when it rejected. */
  rejectedBy?: string;
  /** `vap:<binding>` and `psa` of every warning. */
  warnedBy: Set<string>;
  output: string;
}

const VAP_DENIAL = /ValidatingAdmissionPolicy '[^']+' with binding '([^']+)' denied request/;
const VAP_WARNING = /Validation failed for ValidatingAdmissionPolicy '[^']+' with binding '([^']+)'/g;

function answerOf(responses: readonly ApiResponse[]): ServerAnswer {
  const answer: ServerAnswer = { warnedBy: new Set(), output: '' };
  for (const response of responses) {
    const header = response.headers.warning;
    const warnings = Array.isArray(header) ? header.join('\n') : (header ?? '');
    answer.output += `${response.statusCode} ${warnings} ${response.bodyText}\n`;
    for (const match of warnings.matchAll(VAP_WARNING)) answer.warnedBy.add(`vap:${match[1]}`);
    if (/would violate PodSecurity/.test(warnings)) answer.warnedBy.add('psa');
    if (response.statusCode < 300 || answer.rejectedBy) continue;
    const message = String((response.json() as { message?: unknown }).message ?? response.bodyText);
    const denial = VAP_DENIAL.exec(message);
    if (denial) answer.rejectedBy = `vap:${denial[1]}`;
    else if (/violates PodSecurity/.test(message)) answer.rejectedBy = 'psa';
    else throw new Error(`the dry-run failed for another reason: ${response.statusCode} ${message}`);
  }
  return answer;
}

const RESOURCE_PATHS: Record<string, { prefix: string; plural: string }> = {
  Deployment: { prefix: '/apis/apps/v1', plural: 'deployments' },
  StatefulSet: { prefix: '/apis/apps/v1', plural: 'statefulsets' },
  DaemonSet: { prefix: '/apis/apps/v1', plural: 'daemonsets' },
  Job: { prefix: '/apis/batch/v1', plural: 'jobs' },
  CronJob: { prefix: '/apis/batch/v1', plural: 'cronjobs' },
  Pod: { prefix: '/api/v1', plural: 'pods' },
  Service: { prefix: '/api/v1', plural: 'services' },
};

function collectionPath(object: KubernetesObject): string {
  const resource = RESOURCE_PATHS[object.kind ?? ''];
  if (!resource) throw new Error(`no resource path for ${object.kind ?? ''}`);
  return `${resource.prefix}/namespaces/${String(object.metadata?.namespace)}/${resource.plural}`;
}

/** A merge patch setting an annotation at `path` (a template's metadata, or the object's). */
function annotationPatch(path: readonly string[], key: string, value: string): Record<string, unknown> {
  let patch: Record<string, unknown> = { metadata: { annotations: { [key]: value } } };
  for (const field of [...path].reverse()) patch = { [field]: patch };
  return patch;
}

/**
 * The workload's rollout through the server's dry-run (`?dryRun=All`): a Deployment, StatefulSet,
 * DaemonSet or CronJob patched with a new template annotation (`kubectl rollout restart`'s) and the
 * Pod that rollout creates; a bare Pod or a Job, whose template cannot change, recreated (a drained
 * Pod, a Job run again, come back only as new objects); a Service re-applied with a new annotation.
 */
export async function serverRollout(cluster: Cluster, manifest: KubernetesObject): Promise<ServerAnswer> {
  const name = String(manifest.metadata?.name);
  const create = (object: KubernetesObject) =>
    cluster.apiRequest({ method: 'POST', path: `${collectionPath(object)}?dryRun=All`, body: object });
  const patch = (body: unknown) =>
    cluster.apiRequest({
      method: 'PATCH',
      path: `${collectionPath(manifest)}/${name}?dryRun=All`,
      body,
      contentType: 'application/merge-patch+json',
    });
  const now = new Date().toISOString();
  if (manifest.kind === 'Pod' || manifest.kind === 'Job') {
    const spec = isRecord(manifest.spec) ? manifest.spec : {};
    const { nodeName: _nodeName, selector: _selector, ...recreatedSpec } = spec;
    const template = isRecord(recreatedSpec.template) ? recreatedSpec.template : undefined;
    const metadata = template && isRecord(template.metadata) ? template.metadata : undefined;
    if (metadata?.labels && isRecord(metadata.labels)) {
      // The server sets a new Job's selector labels itself (its uid); the old ones are refused.
      const {
        'controller-uid': _a,
        'batch.kubernetes.io/controller-uid': _b,
        'job-name': _c,
        'batch.kubernetes.io/job-name': _d,
        ...labels
      } = metadata.labels;
      template!.metadata = { ...metadata, labels };
    }
    const labels = isRecord(manifest.metadata?.labels) ? { ...manifest.metadata.labels } : undefined;
    if (labels && manifest.kind === 'Job')
      for (const key of [
        'controller-uid',
        'batch.kubernetes.io/controller-uid',
        'job-name',
        'batch.kubernetes.io/job-name',
      ])
        delete labels[key];
    const recreated = {
      ...manifest,
      metadata: { ...manifest.metadata, name: `${name}-recreated`, ...(labels ? { labels } : {}) },
      spec: recreatedSpec,
    };
    return answerOf([await create(recreated)]);
  }
  const pod = rolloutPod(manifest);
  const kind = workloadKindNamed(manifest.kind ?? '');
  if (!pod || !kind) return answerOf([await patch(annotationPatch([], 'forewarn.dev/reapplied', now))]);
  return answerOf([
    await patch(annotationPatch(kind.podTemplatePath, 'kubectl.kubernetes.io/restartedAt', now)),
    await create(pod),
  ]);
}

/** Runs `work` on each item, at most `concurrency` at a time, keeping the order of the results. */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const position = next++;
      results[position] = await work(items[position] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
