import { createHash } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { RegoCode } from '../../../model/gatekeeper';
import { fileInBundle } from './bundle-file';
import { meterOffLoop } from './fuel-metering';
import { FueledRegoPolicies, LOADING_FUEL, type WasmModule } from './fueled-rego';
import { runOpaWatched, type OpaLimits } from './opa-watchdog';

// Gatekeeper templates' Rego run on Open Policy Agent itself (docs/decisions.md, "Gatekeeper
// verdicts"): the real `opa` binary compiles each template to WebAssembly in a child process (so
// the event loop never waits for a compiler), and the compiled policy is evaluated with the OPA
// project's @open-policy-agent/opa-wasm on the event loop, metered: a Wasm call cannot be
// interrupted, so the module is rewritten to count its own work and stop when the fuel it was
// given is spent (wasm-fuel.ts, in a worker thread after opa; fueled-rego.ts). Compiled policies are cached
// by the hash of their code, so a template re-listed unchanged, or two templates with the same
// code, compile once. Compilation is bounded (issue 32): opa runs under a watchdog
// (opa-watchdog.ts) with a time and memory limit, one at a time, smallest text first, so one huge
// template neither delays the others for long nor outlives the controller; a template whose Rego
// is larger than MAX_REGO_BYTES is not compiled at all.

/** Where the controller image installs opa (Dockerfile). */
export const IMAGE_OPA_PATH = '/usr/local/bin/opa';
/**
 * One opa run's limits: the largest template of the Gatekeeper library compiles in about a second
 * with 60 MiB; the limits leave ten times that, and opa's memory beside the controller's heap fits
 * the component's default 512 MiB pod.
 */
export const OPA_LIMITS: OpaLimits = { timeoutMilliseconds: 15_000, memoryMegabytes: 128 };
/**
 * Rego text (template and libraries) compiled at most: a hundred times the library's largest
 * template (about 6 KB); larger is `unknown` without running opa.
 */
export const MAX_REGO_BYTES = 256 * 1024;
/** Compiled templates kept (a cluster has tens; revisions add up over a long run). */
const MAX_COMPILED_TEMPLATES = 1000;

export type CompiledRego =
  | { state: 'compiling' }
  /** `policy`: the name the evaluator knows the compiled policy by (the hash of its code). */
  | { state: 'ready'; policy: string; entrypoint: string }
  | { state: 'failed'; reason: string }
  | { state: 'no-opa' };

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The configured path (when it is an executable), else the image's, else `opa` on PATH; undefined
 * when there is none.
 */
export function findOpa(configured?: string, searchPath = process.env.PATH ?? ''): string | undefined {
  if (configured !== undefined && configured !== '') return isExecutable(configured) ? configured : undefined;
  if (isExecutable(IMAGE_OPA_PATH)) return IMAGE_OPA_PATH;
  for (const directory of searchPath.split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, 'opa');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

const V1_KEYWORDS = /\b(if|contains)\b/;
const PACKAGE = /^\s*package\s+([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\s*$/m;

/** The template's `violation` rule as an OPA entrypoint: `package a.b` → `a/b/violation`. */
export function violationEntrypoint(rego: string): string | undefined {
  const match = PACKAGE.exec(rego);
  return match ? `${match[1].replaceAll('.', '/')}/violation` : undefined;
}

export function regoCodeHash(code: RegoCode): string {
  return createHash('sha256')
    .update(JSON.stringify([code.version ?? '', code.rego, code.libs]))
    .digest('hex');
}

type OpaRun = { ok: true } | { ok: false; message: string; limit?: 'time' | 'memory' };

// V8 compiles a Wasm module's functions lazily, on their first call: 40 ms for a template's first
// evaluation here, on the evaluation's time and the event loop's. Compiled eagerly instead, by WebAssembly.compile on V8's background
// threads, off the event loop.
setFlagsFromString('--no-wasm-lazy-compilation');

const webAssembly = (
  globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }
).WebAssembly;

/**
 * `opa build -t wasm` of the template and its libraries. Gatekeeper parses a template as Rego v1
 * first and falls back to v0 (unless its source says `version: v1`): so does this, with opa's
 * `--v0-compatible` for the second attempt.
 */
async function compileToWasm(
  opa: string,
  code: RegoCode,
  entrypoint: string,
  limits: OpaLimits,
): Promise<Buffer> {
  const directory = await mkdtemp(path.join(tmpdir(), 'forewarn-rego-'));
  try {
    const sources = path.join(directory, 'src');
    await mkdir(sources);
    await writeFile(path.join(sources, 'template.rego'), code.rego);
    for (const [index, library] of code.libs.entries())
      await writeFile(path.join(sources, `lib_${index}.rego`), library);
    const bundle = path.join(directory, 'bundle.tar.gz');
    const build = (extra: string[]): Promise<OpaRun> =>
      runOpaWatched(opa, ['build', '-t', 'wasm', '-e', entrypoint, ...extra, '-o', bundle, sources], limits);
    // A template with neither `if` nor `contains` is v0 (v1 needs them in rule bodies and partial
    // sets): compiled as v0 first, saving a failing opa run for most installed templates.
    const v0First = code.version !== 'v1' && !V1_KEYWORDS.test([code.rego, ...code.libs].join('\n'));
    const first: string[] = v0First ? ['--v0-compatible'] : [];
    let result = await build(first);
    // A run stopped at a limit is not tried again in the other syntax: it would take as long.
    if (!result.ok && result.limit === undefined && code.version !== 'v1') {
      const other = await build(v0First ? [] : ['--v0-compatible']);
      if (other.ok) result = other;
    }
    if (!result.ok)
      throw new Error(
        result.limit === 'time'
          ? `opa stopped at its compile time limit of ${limits.timeoutMilliseconds / 1000} s`
          : result.limit === 'memory'
            ? `opa stopped at its compile memory limit of ${limits.memoryMegabytes} MiB`
            : result.message,
      );
    const wasm = fileInBundle(await readFile(bundle), 'policy.wasm');
    if (!wasm) throw new Error('opa wrote a bundle without policy.wasm');
    return wasm;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export class RegoEngine {
  private readonly compiled = new Map<string, CompiledRego>();
  /** Each template revision's code is hashed once. */
  private readonly hashes = new WeakMap<RegoCode, string>();
  private readonly pending = new Set<Promise<void>>();
  private changes = 0;
  private answersWhileCompiling = 0;
  private readonly compilationListeners = new Set<() => void>();
  /**
   * One opa at a time (a cluster's templates arrive together at start, the machine keeps its
   * cores), the smallest waiting text first.
   */
  private readonly waiting: Array<{ size: number; start: () => Promise<void> }> = [];
  private compiling = false;

  /** The compiled policies, metered, evaluated on the event loop. */
  readonly evaluator = new FueledRegoPolicies();

  constructor(
    private opaPath: string | undefined = findOpa(),
    private readonly limits: OpaLimits = OPA_LIMITS,
  ) {}

  /** `--opa-path`; undefined: the image's opa, then PATH. */
  configure(opaPath: string | undefined): void {
    this.opaPath = findOpa(opaPath);
    this.changes++;
    for (const [hash, entry] of this.compiled) if (entry.state === 'no-opa') this.compiled.delete(hash);
  }

  get opa(): string | undefined {
    return this.opaPath;
  }

  /** Notes a verdict answered `unknown` because its template was still compiling. */
  noteAnswerWhileCompiling(): void {
    this.answersWhileCompiling++;
  }

  /** Verdicts answered `unknown` so far because their template was compiling (compare before and after). */
  get answersGivenWhileCompiling(): number {
    return this.answersWhileCompiling;
  }

  /**
   * Calls `listener` after each compilation ends, compiled or failed: what was judged while the
   * template compiled can be judged again. Returns what stops the calls.
   */
  onCompilationEnded(listener: () => void): () => void {
    this.compilationListeners.add(listener);
    return () => this.compilationListeners.delete(listener);
  }

  /**
   * Changes whenever a template's compilation ends or opa is configured: verdicts given while a
   * template compiled differ from those after (answers memoised by state must include it).
   */
  get revision(): number {
    return this.changes;
  }

  /** The compiled policy, starting its compilation on first sight (it is ready on a later call). */
  policyFor(code: RegoCode): CompiledRego {
    let hash = this.hashes.get(code);
    if (hash === undefined) {
      hash = regoCodeHash(code);
      this.hashes.set(code, hash);
    }
    const known = this.compiled.get(hash);
    if (known) return known;
    const opa = this.opaPath;
    if (opa === undefined) {
      const missing: CompiledRego = { state: 'no-opa' };
      this.compiled.set(hash, missing);
      return missing;
    }
    const entrypoint = violationEntrypoint(code.rego);
    if (entrypoint === undefined) {
      const failed: CompiledRego = { state: 'failed', reason: 'the Rego has no package statement' };
      this.compiled.set(hash, failed);
      return failed;
    }
    // Each template revision adds one; past the bound the oldest (a replaced revision, most likely)
    // is dropped, and compiled again should it come back.
    if (this.compiled.size >= MAX_COMPILED_TEMPLATES) {
      const oldest = this.compiled.keys().next().value as string;
      if (this.compiled.get(oldest)?.state !== 'compiling') {
        this.compiled.delete(oldest);
        this.evaluator.forget(oldest);
      }
    }
    const size = [code.rego, ...code.libs].reduce((total, source) => total + Buffer.byteLength(source), 0);
    if (size > MAX_REGO_BYTES) {
      const failed: CompiledRego = {
        state: 'failed',
        reason: `the Rego is ${Math.ceil(size / 1024)} KiB, more than the ${MAX_REGO_BYTES / 1024} KiB compiled here`,
      };
      this.compiled.set(hash, failed);
      return failed;
    }
    const compiling: CompiledRego = { state: 'compiling' };
    this.compiled.set(hash, compiling);
    const key = hash;
    const done = this.enqueue(size, async () => {
      try {
        const wasm = await compileToWasm(opa, code, entrypoint, this.limits);
        // Metered in a worker thread, then compiled once here, off the event loop.
        const module = await webAssembly.compile(await meterOffLoop(wasm, LOADING_FUEL));
        this.evaluator.load(key, module, entrypoint);
        this.compiled.set(key, { state: 'ready', policy: key, entrypoint });
      } catch (error: unknown) {
        this.compiled.set(key, {
          state: 'failed',
          reason: error instanceof Error ? error.message : String(error),
        });
      }
      this.changes++;
      for (const listener of this.compilationListeners) listener();
    });
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return compiling;
  }

  /** Runs `compile` when no other compilation runs and no smaller one waits. */
  private enqueue(size: number, compile: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push({ size, start: () => compile().finally(resolve) });
      this.waiting.sort((left, right) => left.size - right.size);
      this.next();
    });
  }

  private next(): void {
    if (this.compiling) return;
    const first = this.waiting.shift();
    if (!first) return;
    this.compiling = true;
    void first.start().finally(() => {
      this.compiling = false;
      this.next();
    });
  }

  /** Resolves once every compilation started so far has finished (one-shot checks, tests). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

/** The process's engine: `configure` it from `--opa-path` at start. */
export const regoEngine = new RegoEngine();
