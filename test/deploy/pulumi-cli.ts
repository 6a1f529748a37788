// Drives the real Pulumi CLI for the deploy tier: a file backend in a temporary directory, a passphrase
// chosen by the test, no update checks and no plugin downloads (the providers and language hosts are
// found on PATH, see run.sh). Every command's output goes to a log file in the work directory.
import { spawn } from 'node:child_process';
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

export interface PulumiResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface PulumiWorkspaceOptions {
  /** Holds the backend, PULUMI_HOME and the command log. */
  workDir: string;
  /** KUBECONFIG of the cluster the default Kubernetes provider deploys to. */
  kubeconfig: string;
  /** Prepended to PATH: the Pulumi CLI, its language hosts and providers. */
  binDirs: readonly string[];
  passphrase: string;
  /** Killed with SIGKILL after this long (default 10 min). */
  timeoutMs?: number;
}

export class PulumiWorkspace {
  readonly backendDir: string;
  readonly logPath: string;
  private readonly env: Record<string, string>;

  constructor(private readonly options: PulumiWorkspaceOptions) {
    this.backendDir = path.join(options.workDir, 'backend');
    this.logPath = path.join(options.workDir, 'pulumi.log');
    this.env = {
      PATH: [...options.binDirs, process.env.PATH ?? ''].join(path.delimiter),
      PULUMI_HOME: path.join(options.workDir, 'pulumi-home'),
      PULUMI_BACKEND_URL: `file://${this.backendDir}`,
      PULUMI_CONFIG_PASSPHRASE: options.passphrase,
      PULUMI_SKIP_UPDATE_CHECK: 'true',
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
      PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: 'true',
      PULUMI_SKIP_CONFIRMATIONS: 'true',
      KUBECONFIG: options.kubeconfig,
      NO_COLOR: '1',
    };
  }

  async init(): Promise<void> {
    await mkdir(this.backendDir, { recursive: true });
  }

  /** Runs `pulumi <args>` in `cwd`. Never rejects on a non-zero exit: check `code`. */
  async run(cwd: string, args: readonly string[], timeoutMs = this.options.timeoutMs): Promise<PulumiResult> {
    const fullArgs = [...args, '--non-interactive', '--color=never'];
    const started = Date.now();
    const result = await runCommand('pulumi', fullArgs, cwd, this.env, timeoutMs ?? 600_000);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    await appendFile(
      this.logPath,
      `\n===== pulumi ${fullArgs.join(' ')} (in ${cwd}): exit ${result.code} in ${seconds}s\n` +
        `${result.stdout}\n----- stderr\n${result.stderr}\n`,
    );
    return result;
  }

  /** Runs `pulumi <args>` and fails with its output unless it exits 0. */
  async succeed(cwd: string, args: readonly string[], timeoutMs?: number): Promise<PulumiResult> {
    const result = await this.run(cwd, args, timeoutMs);
    if (result.code !== 0) {
      throw new Error(
        `pulumi ${args.join(' ')} exited ${result.code}\n${tail(result.stdout)}\n${tail(result.stderr)}`,
      );
    }
    return result;
  }

  /** Environment of other commands that must see the same backend (e.g. pip, python). */
  environment(): Readonly<Record<string, string>> {
    return this.env;
  }
}

export function tail(text: string, lines = 60): string {
  return text.split('\n').slice(-lines).join('\n');
}

export function runCommand(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>>,
  timeoutMs: number,
): Promise<PulumiResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${command}: ${error.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code: timedOut ? 124 : (code ?? 1),
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
  });
}
