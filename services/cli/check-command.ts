import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { isConstraintType, isSeverity } from '../model/api';
import { isRecord } from '../model/kubernetes';
import {
  checkManifest,
  type ConstraintLookup,
  type LookedUpConstraint,
  type ManifestCheckReport,
} from '../controller/check/manifest-check';
import { indexLookup } from '../controller/check/index-lookup';
import { parseManifest } from '../controller/sources/manifest-parsing';
import { constraintQueryPath } from '../model/admission-query';
import type { ControllerApi } from './controller-api';
import { checkExitCode, unavailableError, usageError, type ExitCode, type FailOn } from './exit-codes';
import { loadOfflineCluster } from './offline-index';
import { webhookQueryFor } from './webhook-query';
import { errorMessage } from '../model/error-message';
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
  exitCode: ExitCode;
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

async function manifestFilesOf(name: string): Promise<string[]> {
  let info;
  try {
    info = await stat(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw usageError(`-f ${name}: no such file or directory`);
    throw unavailableError(`cannot read ${name}: ${errorMessage(error)}`);
  }
  if (!info.isDirectory()) return [name];
  const entries = await readdir(name, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && MANIFEST_EXTENSIONS.has(path.extname(entry.name).toLowerCase()))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

async function readManifests(
  options: CheckCommandOptions,
): Promise<Array<{ file: string; content: string }>> {
  const manifests: Array<{ file: string; content: string }> = [];
  for (const name of options.filenames) {
    if (name === '-') {
      manifests.push({ file: '<stdin>', content: await options.readStdin() });
      continue;
    }
    for (const file of await manifestFilesOf(name)) {
      try {
        manifests.push({ file, content: await readFile(file, 'utf8') });
      } catch (error) {
        throw unavailableError(`cannot read ${file}: ${errorMessage(error)}`);
      }
    }
  }
  if (manifests.length === 0)
    throw usageError(`no .yaml, .yml or .json files in ${options.filenames.join(', ')}`);
  return manifests;
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

function controllerLookup(api: ControllerApi): ConstraintLookup {
  // The webhook's own request: the object as the review would carry it, to the admission check.
  return async (query) => {
    // Not a request the webhook makes (it sees namespaced objects only): the object as it is.
    if (query.clusterScoped)
      return parseListedConstraints(
        await api.postJson('/api/v1/admission-check', { object: query.object, operation: 'CREATE' }),
      );
    const checkBody = webhookQueryFor(query).checkBody;
    if (checkBody === undefined)
      return parseListedConstraints(await api.getJson(constraintQueryPath('', webhookQueryFor(query))));
    return parseListedConstraints(await api.postJson('/api/v1/admission-check', JSON.parse(checkBody)));
  };
}

export async function runCheck(options: CheckCommandOptions): Promise<CheckCommandResult> {
  const manifests = await readManifests(options);
  // A manifest that does not parse would not apply either: refuse it before asking anything.
  const parsed = manifests.map(({ file, content }) => ({
    file,
    content,
    result: parseManifest(file, content, { defaultNamespace: options.namespace ?? 'default' }),
  }));
  const problems = parsed.flatMap(({ result }) => result.problems);
  if (problems.length > 0)
    throw usageError(
      problems.map((problem) => `${problem.file}:${problem.line}: ${problem.message}`).join('\n'),
    );

  let lookup: ConstraintLookup;
  let clusterProblems: string[] = [];
  if (options.manifests !== undefined) {
    const cluster = await loadOfflineCluster(options.manifests, options.paramKinds ?? []);
    // Namespaces created by the checked manifests carry the labels cluster-wide policies select on.
    cluster.add(
      parsed.flatMap(({ result }) => result.objects.filter((object) => object.kind === 'Namespace')),
    );
    lookup = indexLookup(cluster.index, cluster.findMissingCompanions);
    clusterProblems = cluster.problems;
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
  return { reports, clusterProblems, exitCode: checkExitCode(rejections, findings, options.failOn) };
}
