import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { ADAPTER_NAMES, type AdapterName, type HealthProblem } from '../../model/api';
import type { KubernetesObject } from '../../model/kubernetes';
import type { Logger } from '../../logging/logger';
import type { AdapterRegistry } from '../adapters/registry';
import { manifestObjectKey, parseManifest, type ManifestProblem } from './manifest-parsing';
import type { AdapterSourceState, KubernetesObjectSink, ObjectSource, SourceStatus } from './source';

// `--manifests DIR`: a cluster described as files. Every change is applied as a diff against the
// previous scan, so an object removed from a file is deleted from the index; a file that stops
// parsing keeps its last good objects (never lose state over a half-saved file) and is reported.

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
const MAX_FILE_BYTES = 8 * 1024 * 1024;

export interface ManifestSourceOptions {
  directory: string;
  sink: KubernetesObjectSink;
  registry: AdapterRegistry;
  logger: Logger;
  /** Re-index this long after the last file event (editors write in bursts). */
  debounceMs?: number;
  /** Watch for changes; off for one-shot use (the `forewarn check` command). */
  watchForChanges?: boolean;
  clock?: () => Date;
}

interface FileState {
  objects: Map<string, KubernetesObject>;
  problems: ManifestProblem[];
}

async function listManifestFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && MANIFEST_EXTENSIONS.has(path.extname(entry.name).toLowerCase()))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

export class ManifestFileSource implements ObjectSource {
  private readonly files = new Map<string, FileState>();
  /** What the sink holds: the merged view of every file, last file (by path) winning duplicates. */
  private applied = new Map<string, string>();
  private appliedObjects = new Map<string, KubernetesObject>();
  private watcher?: FSWatcher;
  private debounceTimer?: NodeJS.Timeout;
  private scanning: Promise<void> = Promise.resolve();
  private synced = false;
  private lastScan: Date | null = null;
  private readonly clock: () => Date;

  constructor(private readonly options: ManifestSourceOptions) {
    this.clock = options.clock ?? (() => new Date());
  }

  async start(): Promise<void> {
    const info = await stat(this.options.directory).catch(() => undefined);
    if (!info?.isDirectory())
      throw new Error(
        `--manifests ${this.options.directory} is not a readable directory; pass a folder of YAML/JSON files`,
      );
    await this.scan();
    this.synced = true;
    if (this.options.watchForChanges !== false) {
      this.watcher = watch(this.options.directory, { ignoreInitial: true, awaitWriteFinish: false });
      this.watcher.on('all', () => this.scheduleScan());
      this.watcher.on('error', (error) =>
        this.options.logger.warn(
          { err: error, directory: this.options.directory },
          'watching manifests failed; changes may be missed until restart',
        ),
      );
      await new Promise<void>((resolve) => this.watcher?.once('ready', () => resolve()));
    }
  }

  async stop(): Promise<void> {
    clearTimeout(this.debounceTimer);
    await this.watcher?.close();
    await this.scanning;
  }

  /** Resolves once every change seen so far is in the index (tests use it instead of sleeping). */
  async settled(): Promise<void> {
    await this.scanning;
  }

  private scheduleScan(): void {
    clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => {
      this.scanning = this.scanning.then(() => this.scan());
    }, this.options.debounceMs ?? 150);
  }

  private async scan(): Promise<void> {
    try {
      const paths = await listManifestFiles(this.options.directory);
      const seen = new Set(paths);
      for (const file of [...this.files.keys()]) if (!seen.has(file)) this.files.delete(file);
      for (const file of paths) await this.readFileState(file);
      this.applyMergedState();
      this.lastScan = this.clock();
    } catch (error) {
      this.options.logger.error(
        { err: error, directory: this.options.directory },
        'scanning manifests failed; check the directory permissions',
      );
    }
  }

  private async readFileState(file: string): Promise<void> {
    const relative = path.relative(this.options.directory, file);
    let content: string;
    try {
      const info = await stat(file);
      if (info.size > MAX_FILE_BYTES) {
        this.setProblems(file, [
          { file: relative, line: 1, message: `file larger than ${MAX_FILE_BYTES} bytes, skipped` },
        ]);
        return;
      }
      content = await readFile(file, 'utf8');
    } catch {
      return; // removed between listing and reading: the next event rescans
    }
    const parsed = parseManifest(relative, content);
    const previous = this.files.get(file);
    const syntaxBroken = parsed.problems.length > 0 && parsed.objects.length === 0 && content.trim() !== '';
    if (syntaxBroken && previous) {
      // Keep the last good objects of a file being edited; report it until it parses again.
      this.setProblems(file, parsed.problems);
      return;
    }
    const objects = new Map(parsed.objects.map((object) => [manifestObjectKey(object), object]));
    if (parsed.problems.length > 0 && previous) {
      // Documents that fail keep their previous objects too, matched by nothing new: keep old ones.
      for (const [key, object] of previous.objects) if (!objects.has(key)) objects.set(key, object);
    }
    for (const problem of parsed.problems)
      this.options.logger.warn(
        problem,
        'manifest document does not parse; fix the file, the rest stays indexed',
      );
    this.files.set(file, { objects, problems: parsed.problems });
  }

  private setProblems(file: string, problems: ManifestProblem[]): void {
    for (const problem of problems)
      this.options.logger.warn(problem, 'manifest file does not parse; keeping its last good objects');
    const previous = this.files.get(file);
    this.files.set(file, { objects: previous?.objects ?? new Map(), problems });
  }

  private applyMergedState(): void {
    const merged = new Map<string, KubernetesObject>();
    for (const state of this.files.values())
      for (const [key, object] of state.objects) merged.set(key, object);
    const serialised = new Map<string, string>();
    for (const [key, object] of merged) serialised.set(key, JSON.stringify(object));
    for (const [key, object] of this.appliedObjects) if (!merged.has(key)) this.options.sink.delete(object);
    for (const [key, object] of merged) {
      if (this.applied.get(key) !== serialised.get(key)) this.options.sink.upsert(object);
    }
    this.applied = serialised;
    this.appliedObjects = merged;
  }

  status(): SourceStatus {
    const problems: HealthProblem[] = [];
    const since = (this.lastScan ?? this.clock()).toISOString();
    for (const state of this.files.values())
      for (const problem of state.problems)
        problems.push({
          source: `manifests: ${problem.file}:${problem.line}`,
          message: problem.message,
          since,
        });
    const adapters: Partial<Record<AdapterName, AdapterSourceState>> = {};
    for (const name of ADAPTER_NAMES) {
      const adapter = this.options.registry.byName(name);
      if (!adapter) continue;
      // Files can hold any kind, so every adapter is enabled (DESIGN.md 6).
      adapters[name] = { enabled: true, watchedResources: adapter.kinds.length, watchFailing: false };
    }
    return { synced: this.synced, connected: true, lastScan: this.lastScan, adapters, problems };
  }
}
