import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadPolicy, type LoadedPolicy } from '@open-policy-agent/opa-wasm';
import type { RegoCode } from '../../../model/gatekeeper';
import { fileInBundle } from './bundle-file';
import { installGoSprintf } from './rego-sprintf';
import { REGO_HOST_BUILTINS } from './rego-builtins';

// Gatekeeper templates' Rego run on Open Policy Agent itself (docs/decisions.md, "Gatekeeper
// verdicts"): the real `opa` binary compiles each template to WebAssembly in a child process (so
// the event loop never waits for a compiler), and the compiled policy is evaluated in-process with
// the OPA project's @open-policy-agent/opa-wasm. Compiled policies are cached by the hash of their
// code, so a template re-listed unchanged, or two templates with the same code, compile once.

/** Where the controller image installs opa (Dockerfile). */
export const IMAGE_OPA_PATH = '/usr/local/bin/opa';
/** A template's compilation may take this long before opa is stopped. */
const COMPILE_TIMEOUT_MILLISECONDS = 30_000;
/** Compiled templates kept (a cluster has tens; revisions add up over a long run). */
const MAX_COMPILED_TEMPLATES = 1000;
/** Wasm memory of one policy: 320 KiB to start, 64 MiB at most (a huge object fails, not the process). */
const MEMORY = { initial: 5, maximum: 1024 };

export type CompiledRego =
  | { state: 'compiling' }
  | { state: 'ready'; policy: LoadedPolicy; entrypoint: string }
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

function runOpa(opa: string, args: string[]): Promise<{ ok: true } | { ok: false; message: string }> {
  return new Promise((resolve) => {
    execFile(
      opa,
      args,
      { timeout: COMPILE_TIMEOUT_MILLISECONDS, maxBuffer: 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (!error) resolve({ ok: true });
        else {
          const output = String(stderr).trim() || error.message;
          resolve({ ok: false, message: output.split('\n').slice(0, 6).join('\n') });
        }
      },
    );
  });
}

/**
 * `opa build -t wasm` of the template and its libraries. Gatekeeper parses a template as Rego v1
 * first and falls back to v0 (unless its source says `version: v1`): so does this, with opa's
 * `--v0-compatible` for the second attempt.
 */
async function compileToWasm(opa: string, code: RegoCode, entrypoint: string): Promise<Buffer> {
  const directory = await mkdtemp(path.join(tmpdir(), 'forewarn-rego-'));
  try {
    const sources = path.join(directory, 'src');
    await mkdir(sources);
    await writeFile(path.join(sources, 'template.rego'), code.rego);
    for (const [index, library] of code.libs.entries())
      await writeFile(path.join(sources, `lib_${index}.rego`), library);
    const bundle = path.join(directory, 'bundle.tar.gz');
    const build = (extra: string[]) =>
      runOpa(opa, ['build', '-t', 'wasm', '-e', entrypoint, ...extra, '-o', bundle, sources]);
    // A template with neither `if` nor `contains` is v0 (v1 needs them in rule bodies and partial
    // sets): compiled as v0 first, saving a failing opa run for most installed templates.
    const v0First = code.version !== 'v1' && !V1_KEYWORDS.test([code.rego, ...code.libs].join('\n'));
    const first: string[] = v0First ? ['--v0-compatible'] : [];
    let result = await build(first);
    if (!result.ok && code.version !== 'v1') {
      const other = await build(v0First ? [] : ['--v0-compatible']);
      if (other.ok) result = other;
    }
    if (!result.ok) throw new Error(result.message);
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
  /** One opa at a time: a cluster's templates arrive together at start, the machine keeps its cores. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private opaPath: string | undefined = findOpa()) {}

  /** `--opa-path`; undefined: the image's opa, then PATH. */
  configure(opaPath: string | undefined): void {
    this.opaPath = findOpa(opaPath);
    this.changes++;
    for (const [hash, entry] of this.compiled) if (entry.state === 'no-opa') this.compiled.delete(hash);
  }

  get opa(): string | undefined {
    return this.opaPath;
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
      if (this.compiled.get(oldest)?.state !== 'compiling') this.compiled.delete(oldest);
    }
    const compiling: CompiledRego = { state: 'compiling' };
    this.compiled.set(hash, compiling);
    const key = hash;
    const done = this.queue
      .then(() => compileToWasm(opa, code, entrypoint))
      .then(async (wasm) => {
        installGoSprintf();
        const policy = await loadPolicy(wasm, MEMORY, { ...REGO_HOST_BUILTINS });
        // V8 compiles Wasm functions on first call: one evaluation here keeps that (about a
        // millisecond per template) off the first admission.
        try {
          policy.evaluate({ review: { object: {} }, parameters: {} }, entrypoint);
        } catch {
          // A template that fails on an empty object says so again on a real one.
        }
        this.compiled.set(key, { state: 'ready', policy, entrypoint });
        this.changes++;
      })
      .catch((error: unknown) => {
        this.compiled.set(key, {
          state: 'failed',
          reason: error instanceof Error ? error.message : String(error),
        });
        this.changes++;
      });
    this.queue = done;
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return compiling;
  }

  /** Resolves once every compilation started so far has finished (one-shot checks, tests). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

/** The process's engine: `configure` it from `--opa-path` at start. */
export const regoEngine = new RegoEngine();
