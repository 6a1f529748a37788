import type { Logger } from '../../logging/logger';
import { admissionCheckBody } from '../../model/admission-query';
import type { Labels } from '../../model/kubernetes';
import {
  createAdmissionCheckAnswerer,
  type AdmissionCheckAnswerer,
  type AdmissionCheckDependencies,
} from './admission-check-route';

// Why the controller answers admission checks to itself once it is ready (issue 33). V8 runs a
// function in its interpreter until it has run often enough, then compiles it; the admission check
// crosses about a thousand functions (body parsing, the index lookup, every verdict engine, the
// rendering), which all reached optimised code only after some 2,500 reviews. A cluster admits a few
// objects a minute, so without this the controller would pay the cold path (interpreted code and the
// compilations themselves) on every admission for hours: measured through the real API server at one
// client, 2.5-2.9 ms of CPU per admission cold against 0.9-1.0 ms warm (docs/benchmarks.md, "One
// client through the API server"). The checks here go through the same answerer code as the webhook's
// (a separate instance: the real memo and the metrics never see them), on synthetic objects in the
// namespaces that have constraints, in short slices each followed by a pause as long: at most half
// of a core and of the event loop while it lasts.

export interface WarmUpOptions {
  /** An answerer of its own (createAdmissionCheckAnswerer without the metrics' memo observer). */
  answerer: AdmissionCheckAnswerer;
  /** Namespaces whose constraints the checks go through; read once, when the warm-up starts. */
  namespaces: () => readonly string[];
  /**
   * Pod labels of a workload of the namespace, if it has one: the synthetic objects carry them, so
   * the constraints that select workloads by label select these and their engines run.
   */
  labelsIn?: (namespace: string) => Labels | undefined;
  /** How many checks at most. */
  maxChecks?: number;
  /** Busy time at most, summed over the slices, in ms: bounds the warm-up on a large index. */
  budgetMs?: number;
  /** Longest run of checks before real requests get their turn, in ms. */
  sliceMs?: number;
  /** Namespaces used at most (the first ones, by name). */
  maxNamespaces?: number;
  now?: () => number;
  /**
   * Runs the next slice after a pause as long as the slice before (`pauseMs`): the warm-up takes at
   * most half of the event loop and of a core, so requests and re-indexing keep their pace.
   */
  yieldToRequests?: (next: () => void, pauseMs: number) => void;
}

export interface WarmUpOutcome {
  checks: number;
  namespaces: number;
  busyMs: number;
}

export const WARM_UP_MAX_CHECKS = 3000;
export const WARM_UP_BUDGET_MS = 3000;
export const WARM_UP_SLICE_MS = 5;
export const WARM_UP_MAX_NAMESPACES = 8;

const REQUESTER = {
  username: 'system:serviceaccount:forewarn-system:warm-up',
  groups: ['system:authenticated'],
};

/** A container as `kubectl create deployment` and the API server's defaulting leave it, with limits. */
function container(sequence: number): Record<string, unknown> {
  return {
    name: 'app',
    image: `registry.example.com/warm-up/app:1.${sequence % 7}`,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  };
}

function podSpec(sequence: number): Record<string, unknown> {
  return {
    containers: [container(sequence)],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    securityContext: {},
    schedulerName: 'default-scheduler',
  };
}

/** The check body the webhook would send for a Deployment or a Pod created in `namespace`. */
export function warmUpCheckBody(namespace: string, sequence: number, workloadLabels?: Labels): string {
  const name = `forewarn-warm-up-${sequence}`;
  const labels = workloadLabels ?? { app: name, 'app.kubernetes.io/name': 'warm-up' };
  const deployment = sequence % 2 === 0;
  const object = deployment
    ? {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace, labels },
        spec: {
          replicas: 1 + (sequence % 3),
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: podSpec(sequence) },
        },
      }
    : { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: podSpec(sequence) };
  const identity = { apiVersion: object.apiVersion, kind: object.kind, namespace };
  // Never over the cap: the object is a few hundred bytes.
  return admissionCheckBody('CREATE', object, null, identity, 'warnings', REQUESTER) ?? '';
}

/**
 * Answers synthetic admission checks until `maxChecks` or `budgetMs`, in slices of `sliceMs`;
 * resolves with what it did. Never throws: an answer that fails ends the warm-up (the real request
 * would fail alike, and is logged there).
 */
export function warmUpAdmissionChecks(options: WarmUpOptions): Promise<WarmUpOutcome> {
  const now = options.now ?? (() => performance.now());
  const yieldToRequests =
    options.yieldToRequests ?? ((next: () => void, pauseMs: number) => setTimeout(next, pauseMs));
  const maxChecks = options.maxChecks ?? WARM_UP_MAX_CHECKS;
  const budgetMs = options.budgetMs ?? WARM_UP_BUDGET_MS;
  const sliceMs = options.sliceMs ?? WARM_UP_SLICE_MS;
  const namespaces = [...options.namespaces()]
    .sort()
    .slice(0, options.maxNamespaces ?? WARM_UP_MAX_NAMESPACES);
  const labels = namespaces.map((namespace) => options.labelsIn?.(namespace));
  const outcome: WarmUpOutcome = { checks: 0, namespaces: namespaces.length, busyMs: 0 };
  if (namespaces.length === 0) return Promise.resolve(outcome);
  return new Promise((resolve) => {
    const slice = () => {
      const started = now();
      try {
        while (outcome.checks < maxChecks && now() - started < sliceMs && namespaces.length > 0) {
          const at = outcome.checks % namespaces.length;
          const checkStarted = now();
          options.answerer(warmUpCheckBody(namespaces[at], outcome.checks, labels[at]), 'full');
          outcome.checks++;
          // A namespace whose one check takes longer than a slice costs its evaluation, not compiling:
          // warming it gains nothing and would hold the loop as long as a real admission each time.
          if (now() - checkStarted > sliceMs) {
            namespaces.splice(at, 1);
            labels.splice(at, 1);
          }
        }
      } catch {
        outcome.busyMs += now() - started;
        return resolve(outcome);
      }
      outcome.busyMs += now() - started;
      if (outcome.checks >= maxChecks || outcome.busyMs >= budgetMs || namespaces.length === 0)
        return resolve(outcome);
      yieldToRequests(slice, now() - started);
    };
    yieldToRequests(slice, 0);
  });
}

/**
 * Starts the warm-up in the background once the index is ready (runtime.ts), on an answerer of its
 * own built from the app's dependencies without the memo observer, and logs what it did.
 */
export function startAdmissionWarmUp(
  dependencies: Omit<AdmissionCheckDependencies, 'observeMemo'>,
  logger: Logger,
): Promise<WarmUpOutcome> {
  return warmUpAdmissionChecks({
    answerer: createAdmissionCheckAnswerer(dependencies),
    namespaces: () => dependencies.index.namespacesWithConstraints(),
    labelsIn: (namespace) => dependencies.index.workloadsInNamespace(namespace)[0]?.podLabels,
  }).then((outcome) => {
    logger.info(
      { event: 'admission_warm_up', ...outcome, busyMs: Math.round(outcome.busyMs) },
      'admission path warmed up',
    );
    return outcome;
  });
}
