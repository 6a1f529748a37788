// The webhook process of the fault matrix (webhook-fault-matrix.test.ts): the build output run with a
// preloaded probe (process-probe.js) that reports its file descriptors and post-GC heap over IPC, so
// the client's own sockets are never counted; its JSON log lines counted per event.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const repositoryRoot = path.join(__dirname, '../../..');
export const webhookMain = path.join(repositoryRoot, 'dist/services/webhook/main.js');
const probe = path.join(__dirname, 'process-probe.js');

export interface ProbeReport {
  fileDescriptors: number;
  heapUsedBytes: number;
  rssBytes: number;
}

export class WebhookProcess {
  readonly events = new Map<string, number>();
  private stdoutRest = '';
  private stderrText = '';
  private portFound!: (port: number) => void;
  readonly port: Promise<number> = new Promise((resolve) => (this.portFound = resolve));

  constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.readLogs(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderrText += chunk));
  }

  get stderr(): string {
    return this.stderrText;
  }

  private readLogs(chunk: string): void {
    const lines = (this.stdoutRest + chunk).split('\n');
    this.stdoutRest = lines.pop() ?? '';
    for (const line of lines) {
      let entry: { event?: unknown; port?: unknown };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      const event = typeof entry.event === 'string' ? entry.event : 'other';
      this.events.set(event, (this.events.get(event) ?? 0) + 1);
      if (event === 'listening' && typeof entry.port === 'number') this.portFound(entry.port);
    }
  }

  probe(): Promise<ProbeReport> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the webhook process did not answer the probe')),
        10_000,
      );
      this.child.once('message', (message: ProbeReport) => {
        clearTimeout(timer);
        resolve(message);
      });
      this.child.send({ type: 'probe' });
    });
  }
}

/** Starts the webhook on a free loopback port with the certificate files in `certificateDirectory`. */
export function spawnProbedWebhook(controllerUrl: string, certificateDirectory: string): WebhookProcess {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--require',
      probe,
      webhookMain,
      '--addr=127.0.0.1:0',
      `--controller-url=${controllerUrl}`,
      '--self-signed=false',
      `--tls-cert-file=${path.join(certificateDirectory, 'tls.crt')}`,
      `--tls-key-file=${path.join(certificateDirectory, 'tls.key')}`,
      '--log-level=info',
      // These tests count, stall and break the controller's answers: the start-up warm-up's own
      // queries would be among them (it has a test of its own, services/webhook/warm-up.test.ts).
      '--warm-up=false',
    ],
    { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  return new WebhookProcess(child);
}

/** The port the webhook logged, or the reason it exited before. */
export function listeningPort(webhook: WebhookProcess): Promise<number> {
  return Promise.race([
    webhook.port,
    new Promise<never>((_resolve, reject) =>
      webhook.child.once('exit', (code) =>
        reject(new Error(`webhook exited with ${code}: ${webhook.stderr}`)),
      ),
    ),
  ]);
}

/** Stops the webhook with SIGTERM if it still runs. */
export async function stopWebhook(webhook: WebhookProcess | undefined): Promise<void> {
  if (webhook && webhook.child.exitCode === null) {
    const exited = new Promise((resolve) => webhook.child.once('exit', resolve));
    webhook.child.kill('SIGTERM');
    await exited;
  }
}
