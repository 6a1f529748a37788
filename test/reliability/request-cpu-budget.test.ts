import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseControllerConfig } from '../../services/controller/config';
import { startController, type RunningController } from '../../services/controller/runtime';
import { silentLogger } from '../../services/logging/logger';
import { EVENT_LOOP_HOLD_MILLISECONDS } from '../../services/controller/verdicts/guard/evaluation-guard';
import { holdBoundForThisMachine, longestEventLoopHold } from '../support/event-loop-hold';
import { initialize, jsonRpcMessages, post, toolCall, toolResultJson } from './support/mcp-wire';

// Issue 32, row 3: one MCP `check` batch of 2 calls of many objects, each object stopped by the
// evaluation guard at 50 ms, held the event loop for the whole batch (108 s for 2 x 492
// Deployments). Now the request yields between objects and stops at its CPU budget (2 s): the event
// loop is never held longer than about one object, and what is left is `unknown` with the reason.
// Holds are measured between two turns of this process's event loop (the controller runs in it),
// less the time its thread waited for a CPU, so the bound does not depend on how loaded the machine is.

jest.setTimeout(180_000);

const NAMESPACE = 'team';
const range = `[${Array.from({ length: 40 }, (_, index) => index).join(', ')}]`;
/**
 * A ValidatingAdmissionPolicy iterating 200^3 times without building anything: each Pod costs the
 * guard's whole deadline (the API server's cost limit would stop it later), and no memory.
 */
const HOSTILE_POLICY = [
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'cube' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
        ],
      },
      validations: [{ expression: `${range}.all(a, ${range}.all(b, ${range}.all(c, a + b + c >= 0)))` }],
    },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'cube-binding' },
    spec: { policyName: 'cube', validationActions: ['Deny'] },
  },
];
/**
 * Enough Pods that the request reaches its 2 s CPU budget even when each object is stopped by its
 * 60 ms of wall time with a few ms of CPU (about 6 ms at load 20 on 2 cores): 800 x 6 ms > 2 s.
 */
const PODS_PER_CALL = 400;
/**
 * The event loop is given back after every object, and one object is bounded by the evaluation
 * guard (50 ms of CPU, 60 ms of wall time): no turn of the loop is held longer than the issue's
 * 100 ms. A hold is the time the loop's thread ran or was blocked, not the time it waited for a CPU
 * (test/support/event-loop-hold.ts). Counted as the whole process's CPU, as this test did before,
 * V8's garbage-collection threads working beside the loop made one object look like 125-160 ms.
 */
const longestHoldBound = () => holdBoundForThisMachine(EVENT_LOOP_HOLD_MILLISECONDS);

/** The YAML of one call (over 16 KiB: parsed in the parsing thread, whose CPU the hold does not count). */
function manifest(call: number): string {
  return Array.from(
    { length: PODS_PER_CALL },
    (_, index) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p${call}-${index}\nspec:\n  containers:\n  - name: a\n    image: nginx\n`,
  ).join('---\n');
}

function cpuMilliseconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

interface CheckedObject {
  name: string;
  verdict?: string;
  reason?: string;
  findings: Array<{ verdict?: string; reason?: string }>;
}

let directory: string;
let controller: RunningController;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'forewarn-budget-'));
  await writeFile(
    path.join(directory, 'objects.yaml'),
    [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }, ...HOSTILE_POLICY]
      .map((object) => JSON.stringify(object))
      .join('\n---\n'),
  );
  const config = parseControllerConfig(
    [
      '--manifests',
      directory,
      '--address',
      '127.0.0.1',
      '--port',
      '0',
      '--mcp-port',
      '0',
      '--detail-level',
      'full',
    ],
    {},
  );
  controller = await startController(config, silentLogger());
});

afterAll(async () => {
  await controller?.close();
  await rm(directory, { recursive: true, force: true });
});

it('a batch of two checks of 400 hostile Pods each: the loop is never held, the rest is unknown by the budget', async () => {
  const { session } = await initialize(`http://127.0.0.1:${controller.mcp?.port}/mcp`);
  if (!session) throw new Error('no MCP session');
  // One object first: the policy's compilation (once per text) is not what this test measures.
  await jsonRpcMessages(
    await post(
      session,
      toolCall(99, 'check', { manifest: manifest(9).split('---')[0], namespace: NAMESPACE }),
    ),
  );
  const batch = [0, 1].map((call) =>
    toolCall(call + 1, 'check', { manifest: manifest(call), namespace: NAMESPACE }),
  );
  const cpuBefore = cpuMilliseconds();
  const { value: messages, heldMilliseconds: holdMs } = await longestEventLoopHold(async () =>
    jsonRpcMessages(await post(session, batch)),
  );
  const requestCpuMs = cpuMilliseconds() - cpuBefore;
  process.stdout.write(`longest hold ${holdMs.toFixed(1)} ms, request CPU ${requestCpuMs.toFixed(0)} ms\n`);

  const objects = messages.flatMap(
    (message) => toolResultJson<{ objects: CheckedObject[] }>(message).objects,
  );
  expect(objects).toHaveLength(2 * PODS_PER_CALL);
  const evaluated = objects.filter((object) => object.verdict === undefined);
  const leftUnknown = objects.filter((object) => object.verdict === 'unknown');
  // Some objects were evaluated (each stopped by its own guard), the rest left by the request's budget.
  expect(evaluated.length).toBeGreaterThan(0);
  expect(evaluated[0].findings.map((finding) => finding.verdict)).toContain('unknown');
  expect(leftUnknown.length).toBeGreaterThan(0);
  expect(evaluated.length + leftUnknown.length).toBe(objects.length);
  for (const object of leftUnknown) expect(object.reason).toMatch(/CPU budget of 2000 ms/);
  // Both calls of the batch share the one budget (they take turns): each call has objects left.
  for (const message of messages) {
    const left = toolResultJson<{ objects: CheckedObject[] }>(message).objects.filter(
      (object) => object.verdict === 'unknown',
    );
    expect(left.length).toBeGreaterThan(0);
  }
  expect(holdMs).toBeLessThan(longestHoldBound());
  // The one budget (not one per call), one object over it, and the parsing and answering around them.
  expect(requestCpuMs).toBeLessThan(2_000 + 1_500);
});
