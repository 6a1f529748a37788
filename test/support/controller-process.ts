import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';

// The real controller process (`node dist/services/controller/main.js`) as `npm start` runs it, for
// the tests that need the process itself (flags, logs, exit codes, memory). It runs the build output
// and builds nothing: `npm test` runs `npm run build` first.

export const repositoryRoot = path.join(__dirname, '../..');
export const controllerMain = path.join(repositoryRoot, 'dist/services/controller/main.js');
// Generous: a bound on failure, not a figure; a loaded machine (CI beside other jobs) takes seconds to start node.
const STARTUP_DEADLINE_MS = 30_000;

export interface LogLine {
  level: string;
  msg?: string;
  [field: string]: unknown;
}

export interface RunningProcess {
  child: ChildProcess;
  stdoutLines: string[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Who the process runs as, for tests that need another user than the test's own: a uid/gid, and a
 * command that starts node in its place (e.g. `setpriv` dropping capabilities), which execs node so the
 * process keeps its pid.
 */
export type ProcessIdentity = Pick<SpawnOptions, 'uid' | 'gid'> & { launcher?: readonly string[] };

/**
 * Every listener on an ephemeral loopback port unless a test's flags or env say otherwise: no test
 * may depend on the default ports (8080, 8090) being free, e.g. while `npm start` serves the demo.
 */
const EPHEMERAL_LISTENERS: NodeJS.ProcessEnv = {
  FOREWARN_ADDRESS: '127.0.0.1',
  FOREWARN_PORT: '0',
  FOREWARN_MCP_PORT: '0',
};

function requireBuild(): void {
  if (!existsSync(controllerMain))
    throw new Error(
      `${path.relative(repositoryRoot, controllerMain)} is missing: run \`npm run build\` first (\`npm test\` does)`,
    );
}

export function parseLogLines(lines: string[]): LogLine[] {
  return lines.map((line) => {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(`log line is not a JSON object: ${line}`);
    return parsed as LogLine;
  });
}

async function sleep(milliseconds: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Polls `probe` until it returns a value, at most `deadlineMs`; returns the value and the time taken. */
export async function until<T>(
  what: string,
  deadlineMs: number,
  probe: () => Promise<T | undefined>,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return { value, elapsedMs: Date.now() - started };
    if (Date.now() - started > deadlineMs) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await sleep(25);
  }
}

export async function exitOf(running: RunningProcess, deadlineMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), deadlineMs)),
  );
  try {
    const outcome = await Promise.race([running.exited, timeout]);
    if (outcome === 'timeout') throw new Error(`process did not exit within ${deadlineMs} ms`);
    return outcome;
  } finally {
    // A pending deadline timer would keep jest alive after the run.
    clearTimeout(timer);
  }
}

export async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Starts controller processes and removes them, and the directories they used, after each test. */
export class ControllerProcesses {
  private readonly children: ChildProcess[] = [];
  private readonly directories: string[] = [];

  run(args: string[], env: NodeJS.ProcessEnv = {}, identity: ProcessIdentity = {}): RunningProcess {
    requireBuild();
    const { launcher = [], ...user } = identity;
    const command = [...launcher, process.execPath, controllerMain, ...args];
    const child = spawn(command[0] ?? process.execPath, command.slice(1), {
      cwd: repositoryRoot,
      // A clean environment: no FOREWARN_* of the developer's shell leaks into the process.
      env: { PATH: process.env.PATH ?? '', ...EPHEMERAL_LISTENERS, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...user,
    });
    this.children.push(child);
    const stdoutLines: string[] = [];
    let partial = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      stdoutLines.push(...lines);
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => {
        if (partial) stdoutLines.push(partial);
        resolve({ code, signal });
      }),
    );
    return { child, stdoutLines, stderr: () => stderr, exited };
  }

  /**
   * Starts the controller on a manifests directory and waits for its bound port and readiness;
   * `env` adds to its clean environment (a V8 heap limit in NODE_OPTIONS, for one).
   */
  async startController(
    manifests: string,
    identity: ProcessIdentity = {},
    deadlineMs = STARTUP_DEADLINE_MS,
    env: NodeJS.ProcessEnv = {},
  ): Promise<{ running: RunningProcess; base: string }> {
    const running = this.run(
      [
        '--manifests',
        manifests,
        '--port',
        '0',
        '--address',
        '127.0.0.1',
        '--detail-level',
        'full',
        '--mcp=false',
      ],
      env,
      identity,
    );
    const { value: port } = await until('the "HTTP API listening" log line', deadlineMs, async () => {
      if (running.child.exitCode !== null) throw new Error(`controller exited early: ${running.stderr()}`);
      const listening = parseLogLines(running.stdoutLines).find((line) => line.msg === 'HTTP API listening');
      return typeof listening?.port === 'number' ? listening.port : undefined;
    });
    const base = `http://127.0.0.1:${port}`;
    await until('readiness', deadlineMs, async () =>
      (await fetch(`${base}/readyz`)).status === 200 ? true : undefined,
    );
    return { running, base };
  }

  removeAfterwards(directory: string): void {
    this.directories.push(directory);
  }

  async cleanUp(): Promise<void> {
    for (const child of this.children.splice(0))
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    for (const directory of this.directories.splice(0)) await rm(directory, { recursive: true, force: true });
  }
}
