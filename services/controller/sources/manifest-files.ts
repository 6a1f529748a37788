import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { ADAPTER_NAMES, type AdapterName, type HealthProblem } from '../../model/api';
import type { KubernetesObject } from '../../model/kubernetes';
import type { Logger } from '../../logging/logger';
import type { AdapterRegistry } from '../adapters/registry';
import { parseManifestIsolated } from './isolated-parsing';
import { manifestObjectKey, type ManifestProblem } from './manifest-parsing';
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
  /** When the file's current problems were first seen: health's `since`, stable across rescans. */
  problemsSince?: Date;
}

/**
 * Every manifest file under `directory`, each real file once. Symbolic links are followed (a
 * mounted ConfigMap is made of them) but every directory is entered once by its real path, so a
 * link back to a parent (`ln -s .. up`) ends the walk there instead of looping.
 */
async function listManifestFiles(directory: string): Promise<string[]> {
  const files: string[] = [];
  const visitedDirectories = new Set<string>();
  const visitedFiles = new Set<string>();
  const pending = [directory];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    const real = await realpath(current).catch(() => undefined);
    if (real === undefined || visitedDirectories.has(real)) continue;
    visitedDirectories.add(real);
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((left, right) => (left.name < right.name ? 1 : -1))) {
      const entryPath = path.join(current, entry.name);
      const info = entry.isSymbolicLink() ? await stat(entryPath).catch(() => undefined) : entry;
      if (info?.isDirectory()) pending.push(entryPath);
      else if (info?.isFile() && MANIFEST_EXTENSIONS.has(path.extname(entry.name).toLowerCase())) {
        const realFile = entry.isSymbolicLink()
          ? await realpath(entryPath).catch(() => entryPath)
          : entryPath;
        if (visitedFiles.has(realFile)) continue;
        visitedFiles.add(realFile);
        files.push(entryPath);
      }
    }
  }
  return files.sort();
}

export class ManifestFileSource implements ObjectSource {
  private readonly files = new Map<string, FileState>();
  /** What the sink holds: the merged view of every file, last file (by path) winning duplicates. */
  private applied = new Map<string, string>();
  private appliedObjects = new Map<string, KubernetesObject>();
  private watcher?: FSWatcher;
  private debounceTimer?: NodeJS.Timeout;
  /** Settles when the scan of a debounced (not yet started) change has finished. */
  private pendingScan?: { done: Promise<void>; resolve: () => void };
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
    if (this.options.watchForChanges !== false) {
      // Watch before the first scan: a file written while it runs then triggers a rescan instead
      // of being missed until the next change.
      // Links are not followed by the watcher (a loop of them grew it past 1 GB); the scan follows
      // them, and a replaced link (how a mounted ConfigMap updates) is itself an event here.
      this.watcher = watch(this.options.directory, {
        ignoreInitial: true,
        awaitWriteFinish: false,
        followSymlinks: false,
      });
      this.watcher.on('all', () => this.scheduleScan());
      this.watcher.on('error', (error) =>
        this.options.logger.warn(
          { err: error, directory: this.options.directory },
          'watching manifests failed; changes may be missed until restart',
        ),
      );
      await new Promise<void>((resolve) => this.watcher?.once('ready', () => resolve()));
    }
    this.scanning = this.scanning.then(() => this.scan());
    await this.scanning;
    this.synced = true;
  }

  async stop(): Promise<void> {
    clearTimeout(this.debounceTimer);
    await this.watcher?.close();
    this.pendingScan?.resolve();
    this.pendingScan = undefined;
    await this.scanning;
  }

  /**
   * Resolves once every change the watcher has reported so far is in the index, including a change
   * still waiting out the debounce (tests use it instead of sleeping).
   */
  async settled(): Promise<void> {
    while (this.pendingScan) await this.pendingScan.done;
    await this.scanning;
  }

  private scheduleScan(): void {
    clearTimeout(this.debounceTimer);
    if (!this.pendingScan) {
      let resolve: () => void = () => undefined;
      const done = new Promise<void>((settle) => (resolve = settle));
      this.pendingScan = { done, resolve };
    }
    this.debounceTimer = setTimeout(() => {
      const pending = this.pendingScan;
      this.pendingScan = undefined;
      this.scanning = this.scanning.then(() => this.scan());
      void this.scanning.then(() => pending?.resolve());
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
    } catch (failure) {
      // Removed between listing and reading: the next event rescans. Anything else (no read
      // permission, an I/O error) is the file's problem, shown in health until it is readable.
      if ((failure as NodeJS.ErrnoException).code === 'ENOENT') return;
      const code = (failure as NodeJS.ErrnoException).code ?? 'error';
      this.setProblems(file, [
        { file: relative, line: 1, message: `file cannot be read (${code}); check its permissions` },
      ]);
      return;
    }
    const parsed = await parseManifestIsolated(relative, content);
    const previous = this.files.get(file);
    const syntaxBroken = parsed.problems.length > 0 && parsed.objects.length === 0 && content.trim() !== '';
    if (syntaxBroken && previous) {
      // Keep the last good objects of a file being edited; report it until it parses again.
      this.setProblems(file, parsed.problems);
      return;
    }
    const objects = new Map(parsed.objects.map((object) => [manifestObjectKey(object), object]));
    const problemsSince = this.problemsSince(file, parsed.problems);
    if (parsed.problems.length > 0 && previous) {
      // Documents that fail keep their previous objects too, matched by nothing new: keep old ones.
      for (const [key, object] of previous.objects) if (!objects.has(key)) objects.set(key, object);
    }
    for (const problem of parsed.problems)
      this.options.logger.warn(
        problem,
        'manifest document does not parse; fix the file, the rest stays indexed',
      );
    this.files.set(file, { objects, problems: parsed.problems, problemsSince });
  }

  private setProblems(file: string, problems: ManifestProblem[]): void {
    for (const problem of problems)
      this.options.logger.warn(problem, 'manifest file does not parse; keeping its last good objects');
    const previous = this.files.get(file);
    this.files.set(file, {
      objects: previous?.objects ?? new Map(),
      problems,
      problemsSince: this.problemsSince(file, problems),
    });
  }

  /** A file broken since the last scan stays broken "since" then; a newly broken one since now. */
  private problemsSince(file: string, problems: ManifestProblem[]): Date | undefined {
    if (problems.length === 0) return undefined;
    return this.files.get(file)?.problemsSince ?? this.clock();
  }

  private applyMergedState(): void {
    const merged = new Map<string, KubernetesObject>();
    // By path, not by when a file first appeared, so which duplicate wins does not depend on history.
    for (const file of [...this.files.keys()].sort())
      for (const [key, object] of this.files.get(file)?.objects ?? []) merged.set(key, object);
    const serialised = new Map<string, string>();
    for (const [key, object] of merged) serialised.set(key, JSON.stringify(object));
    for (const [key, object] of this.appliedObjects) if (!merged.has(key)) this.options.sink.delete(object);
    for (const [key, object] of merged) {
      if (this.applied.get(key) !== serialised.get(key)) this.options.sink.upsert(object);
    }
    this.applied = serialised;
    this.appliedObjects = merged;
  }

  /** Files may hold any kind. (Parameters kept so callers typed with this class can pass them.) */
  watchesKind(_group: string, _kind: string): boolean {
    return true;
  }

  isSynced(): boolean {
    return this.synced;
  }

  status(): SourceStatus {
    const problems: HealthProblem[] = [];
    // Every HTTP request reads the status (for `synced`): only files with problems are visited in
    // order and dated. Sorting and dating every file made each request O(files), about 45 µs per
    // request with 100 files (docs/benchmarks.md).
    const filesWithProblems: Array<[string, FileState]> = [];
    for (const [file, state] of this.files)
      if (state.problems.length > 0) filesWithProblems.push([file, state]);
    for (const [, state] of filesWithProblems.sort(([left], [right]) => (left < right ? -1 : 1))) {
      const since = (state.problemsSince ?? this.lastScan ?? this.clock()).toISOString();
      for (const problem of state.problems)
        problems.push({
          source: `manifests: ${problem.file}:${problem.line}`,
          message: problem.message,
          since,
        });
    }
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
