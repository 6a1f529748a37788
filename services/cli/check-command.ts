import { isConstraintType, isSeverity } from '../model/api';
import { isRecord } from '../model/kubernetes';
import {
  checkManifest,
  type ConstraintLookup,
  type LookedUpConstraint,
  type ManifestCheckReport,
} from '../controller/check/manifest-check';
import { parseManifest } from '../controller/sources/manifest-parsing';
import { constraintQueryPath } from '../model/admission-query';
import type { ControllerApi } from './controller-api';
import { checkExitCode, unavailableError, usageError, type ExitCode, type FailOn } from './exit-codes';
import { offlineEngines } from './offline-engines';
import {
  namespaceMismatches,
  nearestName,
  notAManifestReason,
  readManifestInputs,
  type SkippedFile,
} from './manifest-input';
import { isClusterScoped } from '../controller/sources/manifest-parsing';
import type { KubernetesObject } from '../model/kubernetes';
import { webhookQueryFor } from './webhook-query';
import type { ParamKindResource } from '../model/param-kinds';

// `forewarn check`: reads the manifests, finds where constraints come from (a directory indexed
// here, or a controller), runs the shared check core and turns the counts into an exit code.

export interface CheckCommandOptions {
  /** Files, directories (every .yaml/.yml/.json below), or `-` for standard input. */
  filenames: readonly string[];
  /** Offline: index this directory of cluster manifests instead of asking a controller. */
  manifests?: string;
  /** With `manifests`: the custom kinds whose objects are kept as ValidatingAdmissionPolicy params. */
  paramKinds?: readonly ParamKindResource[];
  /** Namespace for objects that set none. */
  namespace?: string;
  failOn: FailOn;
  /** Used when `manifests` is not given. */
  controller: () => ControllerApi;
  readStdin: () => Promise<string>;
}

export interface CheckCommandResult {
  reports: ManifestCheckReport[];
  /** Problems of the --manifests directory: the check ran, but without these objects. */
  clusterProblems: string[];
  /** Files under -f that are not Kubernetes manifests (Helm, Kustomize files): set aside, with why. */
  skippedFiles: SkippedFile[];
  /** Namespaces the objects go to that the cluster does not have: kubectl apply would fail there. */
  unknownNamespaces: UnknownNamespace[];
  exitCode: ExitCode;
  /** The text of every checked file by its report's name: the CI formats point at its lines. */
  contents: Map<string, string>;
}

export interface UnknownNamespace {
  namespace: string;
  /** The known namespace nearest in spelling, when one is near enough to be meant. */
  suggestion?: string;
  message: string;
}

/** Namespaces the API server creates itself: a repository rarely holds them as manifests. */
const NAMESPACES_OF_EVERY_CLUSTER = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/**
 * The namespaces the objects go to that the cluster's manifests do not hold. Only said when the
 * manifests hold Namespaces at all: a directory without any cannot tell a typo from a namespace.
 */
export function unknownNamespacesOf(
  objects: readonly KubernetesObject[],
  knownNamespaces: readonly string[],
): UnknownNamespace[] {
  if (knownNamespaces.length === 0) return [];
  const known = new Set([...knownNamespaces, ...NAMESPACES_OF_EVERY_CLUSTER]);
  const targets = new Set(
    objects
      .filter((object) => !isClusterScoped(object.apiVersion, object.kind))
      .map((object) => object.metadata?.namespace ?? 'default'),
  );
  return [...targets]
    .filter((namespace) => !known.has(namespace))
    .sort()
    .map((namespace) => {
      const suggestion = nearestName(namespace, knownNamespaces);
      return {
        namespace,
        ...(suggestion === undefined ? {} : { suggestion }),
        message: `namespace "${namespace}" does not exist in the cluster's manifests${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}: kubectl apply would fail with namespaces "${namespace}" not found`,
      };
    });
}

/**
 * The controller's list answer. A body without a constraints list is refused; an entry without a
 * known severity and constraint type, a name or a summary is skipped, as the webhook skips entries
 * it cannot use.
 */
export function parseListedConstraints(body: unknown): LookedUpConstraint[] {
  if (!isRecord(body) || !Array.isArray(body.constraints))
    throw unavailableError(
      'the controller answered GET /api/v1/constraints without a constraints list; do the versions match?',
    );
  return body.constraints.filter(
    (entry): entry is LookedUpConstraint =>
      isRecord(entry) &&
      isSeverity(entry.severity) &&
      isConstraintType(entry.constraintType) &&
      typeof entry.name === 'string' &&
      typeof entry.summary === 'string',
  );
}

export function controllerLookup(api: ControllerApi): ConstraintLookup {
  // The webhook's own request: the object as the review would carry it, to the admission check.
  // Without an operation: the controller checks an object that exists as the UPDATE of it the API
  // server will see (issue 31), anything else as a CREATE.
  return async (query) => {
    // Not a request the webhook makes (it sees namespaced objects only): the object as it is.
    if (query.clusterScoped)
      return parseListedConstraints(await api.postJson('/api/v1/admission-check', { object: query.object }));
    const checkBody = webhookQueryFor(query).checkBody;
    if (checkBody === undefined)
      return parseListedConstraints(await api.getJson(constraintQueryPath('', webhookQueryFor(query))));
    const { operation: _created, ...body } = JSON.parse(checkBody) as Record<string, unknown>;
    return parseListedConstraints(await api.postJson('/api/v1/admission-check', body));
  };
}

export async function runCheck(options: CheckCommandOptions): Promise<CheckCommandResult> {
  const inputs = await readManifestInputs(options.filenames, options.readStdin);
  const skippedFiles: SkippedFile[] = [];
  const parsed: Array<{ file: string; content: string; objects: KubernetesObject[] }> = [];
  const problems: string[] = [];
  for (const input of inputs) {
    const result = parseManifest(input.file, input.content, {
      defaultNamespace: options.namespace ?? 'default',
    });
    const reason = notAManifestReason(input, result);
    if (reason !== undefined) {
      skippedFiles.push({ file: input.file, reason });
      continue;
    }
    parsed.push({ file: input.file, content: input.content, objects: result.objects });
    problems.push(...result.problems.map((problem) => `${problem.file}:${problem.line}: ${problem.message}`));
  }
  // A manifest that does not parse would not apply either: refuse it before asking anything.
  if (problems.length > 0) throw usageError(problems.join('\n'));
  const objects = parsed.flatMap(({ file, objects }) => objects.map((object) => ({ file, object })));
  const mismatches = namespaceMismatches(objects, options.namespace);
  if (mismatches.length > 0) throw usageError(mismatches.join('\n'));
  if (objects.length === 0)
    throw usageError(
      [
        `nothing to check: no Kubernetes object in ${options.filenames.join(', ')}`,
        ...skippedFiles.map((skipped) => `${skipped.file}: skipped, ${skipped.reason}`),
      ].join('\n'),
    );

  let lookup: ConstraintLookup;
  let clusterProblems: string[] = [];
  let unknownNamespaces: UnknownNamespace[] = [];
  if (options.manifests !== undefined) {
    // The engines and the index load only for an offline check (start-up time, docs/benchmarks.md).
    const { loadOfflineCluster, indexLookup } = offlineEngines();
    const cluster = await loadOfflineCluster(options.manifests, options.paramKinds ?? []);
    // Namespaces created by the checked manifests carry the labels cluster-wide policies select on.
    cluster.add(objects.map(({ object }) => object).filter((object) => object.kind === 'Namespace'));
    lookup = indexLookup(
      cluster.index,
      cluster.findMissingCompanions,
      'full',
      undefined,
      cluster.findExisting,
    );
    clusterProblems = cluster.problems;
    unknownNamespaces = unknownNamespacesOf(
      objects.map(({ object }) => object),
      cluster.index.knownNamespaces(),
    );
  } else {
    lookup = controllerLookup(options.controller());
  }

  const reports: ManifestCheckReport[] = [];
  for (const { file, content } of parsed)
    reports.push(await checkManifest(file, content, lookup, { namespace: options.namespace }));
  // What will happen to the objects (issue 31): 3 for a rejection, 1 for an audit, a warning or a
  // rule not evaluated; standing constraints (network, mesh, opaque webhooks) never count.
  const rejections = reports.reduce((sum, report) => sum + report.rejectionCount, 0);
  const findings = reports.reduce(
    (sum, report) => sum + report.auditedOrWarnedCount + report.unknownCount,
    0,
  );
  return {
    reports,
    clusterProblems,
    skippedFiles,
    unknownNamespaces,
    exitCode: checkExitCode(rejections, findings, options.failOn),
    contents: new Map(parsed.map(({ file, content }) => [file, content])),
  };
}
