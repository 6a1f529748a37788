// Support for the Forewarn end-to-end test (forewarn.test.ts): long-running child processes (the
// controller and the webhook) with their logs captured to files, a small client of the controller's
// HTTP API, and the readers that turn its JSON into typed values.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { parse } from 'yaml';
import { errorMessage } from '../../services/model/error-message';

export const repositoryRoot = path.resolve(__dirname, '../..');
/** `npm run build` output; FOREWARN_E2E_DIST points at another build (e.g. a patched copy). */
const distDir = process.env.FOREWARN_E2E_DIST
  ? path.resolve(process.env.FOREWARN_E2E_DIST)
  : path.join(repositoryRoot, 'dist');
export const controllerEntry = path.join(distDir, 'services/controller/main.js');
export const webhookEntry = path.join(distDir, 'services/webhook/main.js');

/** Fails with what to do when `npm run build` has not produced the processes under test. */
export function requireBuiltEntries(): void {
  for (const entry of [controllerEntry, webhookEntry]) {
    if (!existsSync(entry)) {
      throw new Error(`${path.relative(repositoryRoot, entry)} is missing: run 'npm run build' first`);
    }
  }
}

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asJsonObject(value: unknown, what: string): JsonObject {
  if (!isJsonObject(value)) throw new Error(`${what} is not a JSON object: ${JSON.stringify(value)}`);
  return value;
}

/** A loopback port nothing listens on (bound, then released). */
export function unusedLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface LineWaiter {
  matches: (line: JsonObject) => boolean;
  resolve: (line: JsonObject) => void;
}

const KEPT_LINES = 2_000;

/**
 * A Node.js child process whose stdout and stderr go to a log file (appended, so a restart keeps
 * the earlier run) and whose JSON log lines can be awaited.
 */
export class ManagedProcess {
  readonly exited: Promise<ProcessExit>;
  private readonly child: ChildProcess;
  private readonly logFile: WriteStream;
  private readonly recentLines: string[] = [];
  private readonly jsonLines: JsonObject[] = [];
  private readonly waiters = new Set<LineWaiter>();
  private exit: ProcessExit | null = null;
  private partialLine = '';

  private constructor(
    readonly name: string,
    readonly logPath: string,
    script: string,
    args: readonly string[],
    env: Readonly<Record<string, string>>,
  ) {
    this.logFile = createWriteStream(logPath, { flags: 'a' });
    this.logFile.write(`--- ${new Date().toISOString()} start ${name}: node ${script} ${args.join(' ')}\n`);
    this.child = spawn(process.execPath, [script, ...args], {
      cwd: repositoryRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (chunk: Buffer) => this.receive(chunk));
    this.child.stderr?.on('data', (chunk: Buffer) => this.receive(chunk));
    this.exited = new Promise((resolve) => {
      this.child.once('error', (error) => {
        this.note(`cannot start: ${error.message}`);
        this.exit = { code: null, signal: null };
        resolve(this.exit);
      });
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        this.note(`exited with code ${String(code)} signal ${String(signal)}`);
        resolve(this.exit);
      });
    });
  }

  static start(
    name: string,
    logPath: string,
    script: string,
    args: readonly string[],
    env: Readonly<Record<string, string>>,
  ): ManagedProcess {
    return new ManagedProcess(name, logPath, script, args, env);
  }

  get running(): boolean {
    return this.exit === null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Resolves with the first JSON log line (past or future) that matches; rejects on exit or timeout. */
  waitForLogLine(
    matches: (line: JsonObject) => boolean,
    timeoutMs: number,
    description: string,
  ): Promise<JsonObject> {
    const earlier = this.jsonLines.find(matches);
    if (earlier) return Promise.resolve(earlier);
    return new Promise<JsonObject>((resolve, reject) => {
      const waiter: LineWaiter = {
        matches,
        resolve: (line) => {
          cleanUp();
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        cleanUp();
        reject(new Error(`${this.name}: no log line ${description} within ${timeoutMs} ms`));
      }, timeoutMs);
      const onExit = (exit: ProcessExit): void => {
        cleanUp();
        reject(
          new Error(
            `${this.name} exited (code ${String(exit.code)}, signal ${String(exit.signal)}) before logging ${description}`,
          ),
        );
      };
      const cleanUp = (): void => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      this.waiters.add(waiter);
      void this.exited.then((exit) => {
        if (this.waiters.has(waiter)) onExit(exit);
      });
    });
  }

  /** JSON log lines so far that match. */
  logLines(matches: (line: JsonObject) => boolean): JsonObject[] {
    return this.jsonLines.filter(matches);
  }

  /** Sends a signal and waits for the process to exit (SIGKILL after `graceMs` if it lingers). */
  async stop(signal: NodeJS.Signals = 'SIGKILL', graceMs = 5_000): Promise<ProcessExit> {
    if (!this.running) return this.exited;
    this.child.kill(signal);
    const lingering = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const exit = await this.exited;
    clearTimeout(lingering);
    return exit;
  }

  /** The last lines it printed, for failure reports. */
  tail(count = 40): string {
    return this.recentLines.slice(-count).join('\n');
  }

  /** Flushes the log file; call after stop(). */
  closeLog(): Promise<void> {
    return new Promise((resolve) => this.logFile.end(resolve));
  }

  private note(message: string): void {
    const line = `--- ${new Date().toISOString()} ${this.name} ${message}`;
    this.keep(line);
    if (!this.logFile.writableEnded) this.logFile.write(`${line}\n`);
  }

  private receive(chunk: Buffer): void {
    if (!this.logFile.writableEnded) this.logFile.write(chunk);
    const text = this.partialLine + chunk.toString('utf8');
    const lines = text.split('\n');
    this.partialLine = lines.pop() ?? '';
    for (const line of lines) this.keep(line);
  }

  private keep(line: string): void {
    this.recentLines.push(line);
    if (this.recentLines.length > KEPT_LINES)
      this.recentLines.splice(0, this.recentLines.length - KEPT_LINES);
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    if (!isJsonObject(parsed)) return;
    this.jsonLines.push(parsed);
    for (const waiter of [...this.waiters]) if (waiter.matches(parsed)) waiter.resolve(parsed);
  }
}

export interface HttpJsonResponse {
  status: number;
  body: unknown;
}

/** GET returning status and parsed JSON (null when the body is not JSON). */
export async function getJson(url: string, timeoutMs = 2_000): Promise<HttpJsonResponse> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: response.status, body };
}

export interface ReportEntry {
  name: string;
  type: string;
  severity: string;
  effect: string;
  source: string;
}

export interface AdapterHealth {
  enabled: boolean;
  watchedResources: number;
  reason: string | null;
}

export interface HealthReport {
  status: string;
  adapters: Record<string, AdapterHealth>;
}

function readString(object: JsonObject, key: string, what: string): string {
  const value = object[key];
  if (typeof value !== 'string') throw new Error(`${what}.${key} is not a string: ${JSON.stringify(value)}`);
  return value;
}

/** The controller's HTTP API (spec 4.1, 4.2) at one base URL. */
/** One entry of `POST /api/v1/admission-check` as the e2e files read it. */
export interface CheckedEntry {
  name: string;
  effect: string;
  sourceKind: string;
  sourceName: string;
  summary: string;
  /** What the constraint does to this object (issue 31): Info for network and mesh rules. */
  severity: string;
  verdict: string;
  reason?: string;
  evidence: Array<{ path: string; message: string }>;
}

export class ControllerApi {
  constructor(readonly baseUrl: string) {}

  /** The verdicts of every constraint that applies to `object`, admitted with CREATE. */
  async admissionCheck(object: Record<string, unknown>): Promise<CheckedEntry[]> {
    const response = await fetch(`${this.baseUrl}/api/v1/admission-check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'CREATE', object }),
      signal: AbortSignal.timeout(5_000),
    });
    const body = asJsonObject(await response.json(), 'admission-check answer');
    if (response.status !== 200)
      throw new Error(`admission-check: HTTP ${response.status} ${JSON.stringify(body)}`);
    if (!Array.isArray(body.constraints)) throw new Error('admission-check: no constraints array');
    return body.constraints as CheckedEntry[];
  }

  /** `<sourceName> <verdict> <severity>` per constraint that applies to the manifest's object (issue 31). */
  async sourceVerdicts(manifest: string): Promise<string[]> {
    const entries = await this.admissionCheck(asJsonObject(parse(manifest), 'manifest'));
    return entries.map((entry) => `${entry.sourceName} ${entry.verdict} ${entry.severity}`);
  }

  async isReady(): Promise<boolean> {
    return (await getJson(`${this.baseUrl}/readyz`)).status === 200;
  }

  async report(namespace: string): Promise<ReportEntry[]> {
    const response = await getJson(`${this.baseUrl}/resources/reports/${namespace}`);
    if (response.status !== 200) throw new Error(`report of ${namespace}: HTTP ${response.status}`);
    const body = asJsonObject(response.body, 'report');
    const constraints = body.constraints;
    if (!Array.isArray(constraints)) throw new Error('report.constraints is not an array');
    return constraints.map((entry: unknown, index) => {
      const object = asJsonObject(entry, `report.constraints[${index}]`);
      const where = `report.constraints[${index}]`;
      return {
        name: readString(object, 'name', where),
        type: readString(object, 'type', where),
        severity: readString(object, 'severity', where),
        effect: readString(object, 'effect', where),
        source: readString(object, 'source', where),
      };
    });
  }

  async health(): Promise<HealthReport> {
    const response = await getJson(`${this.baseUrl}/resources/health`);
    const body = asJsonObject(response.body, 'health');
    const adapters: Record<string, AdapterHealth> = {};
    for (const [name, value] of Object.entries(asJsonObject(body.adapters, 'health.adapters'))) {
      const adapter = asJsonObject(value, `health.adapters.${name}`);
      adapters[name] = {
        enabled: adapter.enabled === true,
        watchedResources: typeof adapter.watched_resources === 'number' ? adapter.watched_resources : -1,
        reason: typeof adapter.reason === 'string' ? adapter.reason : null,
      };
    }
    return { status: readString(body, 'status', 'health'), adapters };
  }

  async capabilities(): Promise<{ adapters: string[]; lastScan: string }> {
    const response = await getJson(`${this.baseUrl}/resources/capabilities`);
    const body = asJsonObject(response.body, 'capabilities');
    const adapters = Array.isArray(body.adapters)
      ? body.adapters.filter((name): name is string => typeof name === 'string')
      : [];
    return { adapters, lastScan: readString(body, 'lastScan', 'capabilities') };
  }
}

/** The `Warning: ...` lines kubectl printed on stderr, without the `Warning: ` prefix. */
export function admissionWarnings(kubectlStderr: string): string[] {
  return kubectlStderr
    .split('\n')
    .filter((line) => line.startsWith('Warning: '))
    .map((line) => line.slice('Warning: '.length));
}

/** Polls `read` as fast as `intervalMs` allows until `accept` holds; resolves with the elapsed ms. */
export async function millisecondsUntil<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs: number,
  since: number,
  description: string,
  intervalMs = 20,
): Promise<number> {
  const deadline = since + timeoutMs;
  let last = 'never read';
  for (;;) {
    try {
      const value = await read();
      if (accept(value)) return Date.now() - since;
      last = JSON.stringify(value).slice(0, 500);
    } catch (error) {
      last = `error: ${errorMessage(error)}`;
    }
    if (Date.now() >= deadline)
      throw new Error(`${description}: not seen within ${timeoutMs} ms (last: ${last})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
