import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { groupOf, type KubernetesObject } from '../model/kubernetes';
import { errorMessage } from '../model/error-message';
import { isClusterScoped, type ParsedManifest } from '../controller/sources/manifest-parsing';
import { unavailableError, usageError } from './exit-codes';

// What `forewarn check -f` reads, taken as `kubectl apply -f` takes it: files, folders (every
// .yaml/.yml/.json below) or standard input; the namespace rules of `kubectl apply -n`. A folder of a
// real repository also holds what is not a Kubernetes object (a Helm chart's Chart.yaml, values and
// templates, a kustomization): those files are set aside with a note rather than failing the run.

export interface ManifestInput {
  file: string;
  content: string;
  /** Found by walking a folder (not named on the command line): files of other tools are expected there. */
  fromFolder: boolean;
}

/** A file set aside, and why. */
export interface SkippedFile {
  file: string;
  reason: string;
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

async function manifestFilesOf(name: string): Promise<Array<{ file: string; fromFolder: boolean }>> {
  let info;
  try {
    info = await stat(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw usageError(`-f ${name}: no such file or directory`);
    throw unavailableError(`cannot read ${name}: ${errorMessage(error)}`);
  }
  if (!info.isDirectory()) return [{ file: name, fromFolder: false }];
  const entries = await readdir(name, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && MANIFEST_EXTENSIONS.has(path.extname(entry.name).toLowerCase()))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort()
    .map((file) => ({ file, fromFolder: true }));
}

/** Every manifest named by `-f`, in order; `-` reads standard input once. */
export async function readManifestInputs(
  filenames: readonly string[],
  readStdin: () => Promise<string>,
): Promise<ManifestInput[]> {
  const inputs: ManifestInput[] = [];
  for (const name of filenames) {
    if (name === '-') {
      inputs.push({ file: '<stdin>', content: await readStdin(), fromFolder: false });
      continue;
    }
    for (const { file, fromFolder } of await manifestFilesOf(name)) {
      try {
        inputs.push({ file, content: await readFile(file, 'utf8'), fromFolder });
      } catch (error) {
        throw unavailableError(`cannot read ${file}: ${errorMessage(error)}`);
      }
    }
  }
  if (inputs.length === 0) throw usageError(`no .yaml, .yml or .json files in ${filenames.join(', ')}`);
  return inputs;
}

const RENDER_KUSTOMIZATION = 'render it first: kustomize build DIR | forewarn check -f -';
const RENDER_CHART = 'render the chart first: helm template CHART | forewarn check -f -';
const KUSTOMIZE_GROUP = 'kustomize.config.k8s.io';

/** Problems that say "this document is not a Kubernetes object at all" (as opposed to a broken one). */
function isNotAnObjectProblem(message: string): boolean {
  return (
    message === 'object has no apiVersion or kind' ||
    message === 'document is not a Kubernetes object (expected a mapping)'
  );
}

/**
 * Why a file is not a Kubernetes manifest, or undefined when it is one (good or broken). By name
 * first (Helm's and Kustomize's own files), then by content: template markup that does not read as
 * objects, Kustomize's kinds, and, in a folder, files without any apiVersion and kind. A ConfigMap
 * holding `{{ }}` (an alerting template) reads as an object and is checked as one.
 */
export function notAManifestReason(input: ManifestInput, parsed: ParsedManifest): string | undefined {
  const name = path.basename(input.file).toLowerCase();
  if (name === 'kustomization.yaml' || name === 'kustomization.yml' || name === 'kustomization')
    return `a Kustomize kustomization, not a Kubernetes object; ${RENDER_KUSTOMIZATION}`;
  if (name === 'chart.yaml' || name === 'chart.yml')
    return `a Helm chart's Chart.yaml, not a Kubernetes object; ${RENDER_CHART}`;
  if (/^values([.-][^/]*)?\.(ya?ml|json)$/.test(name) || name === 'values.schema.json')
    return `Helm chart values, not a Kubernetes object; ${RENDER_CHART}`;
  // A chart's template may read as objects (`image: "{{ .Values.image }}"`), yet is not what applies.
  const inChartTemplates = input.fromFolder && input.file.split(path.sep).includes('templates');
  if (input.content.includes('{{') && (parsed.problems.length > 0 || inChartTemplates))
    return `template markup ({{ }}) that does not read as Kubernetes objects; ${RENDER_CHART}`;
  const kustomizeKinds = parsed.objects.filter((object) => groupOf(object.apiVersion) === KUSTOMIZE_GROUP);
  if (kustomizeKinds.length > 0 && kustomizeKinds.length === parsed.objects.length)
    return `a Kustomize ${kustomizeKinds[0].kind}, not a Kubernetes object; ${RENDER_KUSTOMIZATION}`;
  if (
    input.fromFolder &&
    parsed.objects.length === 0 &&
    parsed.problems.length > 0 &&
    parsed.problems.every((problem) => isNotAnObjectProblem(problem.message))
  )
    return 'holds no apiVersion and kind: not a Kubernetes manifest';
  return undefined;
}

/**
 * `kubectl apply -n NS` refuses an object that names another namespace, with this message
 * (k8s.io/kubectl, pkg/cmd/apply): the same words here, one line per object.
 */
export function namespaceMismatches(
  objects: ReadonlyArray<{ file: string; object: KubernetesObject }>,
  requestedNamespace: string | undefined,
): string[] {
  if (requestedNamespace === undefined) return [];
  return objects
    .filter(
      ({ object }) =>
        !isClusterScoped(object.apiVersion, object.kind) &&
        object.metadata?.namespace !== undefined &&
        object.metadata.namespace !== requestedNamespace,
    )
    .map(
      ({ file, object }) =>
        `${file}: ${object.kind} ${object.metadata?.name ?? ''}: the namespace from the provided object "${object.metadata?.namespace ?? ''}" does not match the namespace "${requestedNamespace}". You must pass '--namespace=${object.metadata?.namespace ?? ''}' to perform this operation.`,
    );
}

/**
 * Edit distance counting a swap of two neighbouring letters as one edit (optimal string alignment):
 * `shpo` is one typing slip from `shop`, as a reader sees it.
 */
function editDistance(left: string, right: string): number {
  const rows: number[][] = [Array.from({ length: right.length + 1 }, (_, index) => index)];
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    for (let column = 1; column <= right.length; column++) {
      const substitution = left[row - 1] === right[column - 1] ? 0 : 1;
      current[column] = Math.min(
        rows[row - 1][column] + 1,
        current[column - 1] + 1,
        rows[row - 1][column - 1] + substitution,
      );
      if (row > 1 && column > 1 && left[row - 1] === right[column - 2] && left[row - 2] === right[column - 1])
        current[column] = Math.min(current[column], rows[row - 2][column - 2] + 1);
    }
    rows.push(current);
  }
  return rows[left.length][right.length];
}

/** The known name nearest to `name`, when it is near enough to be a typo (at most a third differs). */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of [...known].sort()) {
    const distance = editDistance(name, candidate);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  return best && best.distance <= Math.max(1, Math.floor(name.length / 3)) ? best.name : undefined;
}
