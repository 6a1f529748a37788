import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ControllerProcesses, RunningProcess } from '../../support/controller-process';

// The real controller process under one hostile policy and object (issue 27): the policy is loaded
// through `--manifests` from a temp directory, the object is sent to `POST /api/v1/admission-check`,
// and `/healthz` is probed back to back the whole time. Ephemeral ports only.

const STARTUP_DEADLINE_MS = 15_000;

export interface HostileController {
  running: RunningProcess;
  base: string;
}

/** Writes the manifests (YAML or JSON documents) into a fresh temp directory. */
export async function manifestsDirectory(
  processes: ControllerProcesses,
  documents: readonly object[],
): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'forewarn-hostile-'));
  processes.removeAfterwards(directory);
  // JSON is YAML: one document per file keeps every object exactly as written.
  await Promise.all(
    documents.map((document, position) =>
      writeFile(path.join(directory, `object-${position}.yaml`), JSON.stringify(document)),
    ),
  );
  return directory;
}

/** Starts the controller on the directory, optionally with a V8 heap limit (megabytes). */
export function startHostileController(
  processes: ControllerProcesses,
  manifests: string,
  heapLimitMegabytes?: number,
): Promise<HostileController> {
  return processes.startController(
    manifests,
    {},
    STARTUP_DEADLINE_MS,
    heapLimitMegabytes ? { NODE_OPTIONS: `--max-old-space-size=${heapLimitMegabytes}` } : {},
  );
}

export interface CheckedConstraint {
  name: string;
  verdict: string;
  reason?: string;
}

export interface HostileOutcome {
  /** The HTTP status of the admission check, or the error if none came back. */
  status: number | string;
  constraints: CheckedConstraint[];
  /** Wall time of the admission check. */
  answerMilliseconds: number;
  /** `/healthz` latencies measured back to back while the check ran. */
  healthLatencies: number[];
  healthFailures: number;
}

/** The 99th percentile of the latencies (nearest rank). */
export function percentile99(latencies: readonly number[]): number {
  if (latencies.length === 0) return Number.POSITIVE_INFINITY;
  const sorted = [...latencies].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

/**
 * A few ordinary checks first, as a controller in service has answered before: the measurement is
 * of the hostile input, not of the first request's lazy compilation.
 */
export async function warmUp(controller: HostileController, ordinaryObject: object): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const response = await fetch(`${controller.base}/api/v1/admission-check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ object: ordinaryObject, operation: 'CREATE' }),
    });
    await response.arrayBuffer();
    await fetch(`${controller.base}/healthz`).then((health) => health.arrayBuffer());
  }
}

/** Sends the object to the admission check while probing `/healthz`; returns both measurements. */
export async function checkWhileProbing(
  controller: HostileController,
  object: object,
  answerDeadlineMs: number,
): Promise<HostileOutcome> {
  let checking = true;
  const healthLatencies: number[] = [];
  let healthFailures = 0;
  const probing = (async () => {
    while (checking) {
      const started = performance.now();
      try {
        const response = await fetch(`${controller.base}/healthz`, { signal: AbortSignal.timeout(5000) });
        await response.arrayBuffer();
        if (response.status !== 200) healthFailures++;
      } catch {
        healthFailures++;
      }
      healthLatencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  // Let the probe take a first reading so the check starts under observation.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = performance.now();
  let status: number | string;
  let constraints: CheckedConstraint[] = [];
  try {
    const response = await fetch(`${controller.base}/api/v1/admission-check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ object, operation: 'CREATE' }),
      signal: AbortSignal.timeout(answerDeadlineMs),
    });
    status = response.status;
    const body = (await response.json()) as { constraints?: CheckedConstraint[] };
    constraints = body.constraints ?? [];
  } catch (error) {
    status = error instanceof Error ? error.message : String(error);
  }
  const answerMilliseconds = performance.now() - started;
  // A few more probes after the answer: the event loop must be free again too.
  await new Promise((resolve) => setTimeout(resolve, 100));
  checking = false;
  await probing;
  return { status, constraints, answerMilliseconds, healthLatencies, healthFailures };
}

/** Whether the process still answers (and has not exited). */
export async function isAlive(controller: HostileController): Promise<boolean> {
  if (controller.running.child.exitCode !== null || controller.running.child.signalCode !== null)
    return false;
  try {
    return (await fetch(`${controller.base}/healthz`, { signal: AbortSignal.timeout(2000) })).status === 200;
  } catch {
    return false;
  }
}
