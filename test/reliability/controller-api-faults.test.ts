import type { RunningController } from '../../services/controller/runtime';
import type { ConstraintIndex } from '../../services/controller/index/constraint-index';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { renderFullText } from '../../services/model/text';
import { indexObjects } from '../support/controller-fixtures';
import { startClusterController } from '../support/cluster-controller';
import {
  apply,
  NAMESPACES,
  objectsFor,
  randomFrom,
  remove,
  WATCHED_TYPES,
  type Pick,
} from './support/storm-objects';
import { KubernetesApiTestServer } from '../support/kubernetes-api-server';

// The controller (real runtime, cluster source, HTTP API) against the Kubernetes API test server
// while a seeded storm mixes object changes with every API fault at once: dropped and cleanly closed
// watches, 410 Gone, failing and slow lists, hung watches, and restarts during which the state
// changes. test/integration/controller/cluster-source.test.ts proves each fault alone; here they
// overlap. Afterwards the index must equal an index rebuilt from the server's objects (namespace
// labels and workloads included), and throughout, /resources/health must not claim `healthy`
// while the API server is down, nor anything but `healthy` once it converged.

const FAST = {
  backoffInitialMs: 50,
  backoffMaxMs: 300,
  watchTimeoutSeconds: 30,
  inactivityMs: 1_500,
  listPageSize: 2,
};
const OUTAGE_MS = 1_000;
/** How long after the API server went down health may still say `healthy`. */
const DETECTION_MS = 500;

/** What every namespace sees: its constraints (own and cluster-wide, by its labels) and workloads. */
function namespaceViews(index: ConstraintIndex): string[] {
  const namespaces = new Set([
    ...NAMESPACES,
    ...index.namespacesWithConstraints(),
    ...index.knownNamespaces(),
  ]);
  return [...namespaces].sort().flatMap((namespace) => [
    ...index
      .constraintsForNamespace(namespace)
      // Missing-companion findings come from a debounced tracker the rebuild does not run.
      .filter((constraint) => constraint.adapter !== 'missingresource')
      .map(
        (constraint) =>
          `${namespace} ${constraint.source.kind} ${constraint.name} ${constraint.severity} ${constraint.effect} ` +
          renderFullText(constraint.summary),
      )
      .sort(),
    ...index
      .workloadsInNamespace(namespace)
      .map(
        (workload) =>
          `${namespace} workload ${workload.kind}/${workload.name} ${JSON.stringify(workload.podLabels)}`,
      )
      .sort(),
  ]);
}

function serverTruth(server: KubernetesApiTestServer): string[] {
  const objects = WATCHED_TYPES.flatMap(([apiVersion, kind]) => server.list(apiVersion, kind));
  return namespaceViews(indexObjects(objects as KubernetesObject[]).index);
}

interface HealthSample {
  at: number;
  status: string;
}

interface Storm {
  server: KubernetesApiTestServer;
  random: () => number;
  pick: Pick;
  builders: Array<() => KubernetesObject>;
  /** The API server restarts: from its stop until it serves again. */
  outages: Array<{ from: number; to: number }>;
}

/** Every API fault, by index; the last one is an outage during which the state changes. */
function stormFaults({ server, random, pick, builders, outages }: Storm): Array<() => Promise<void> | void> {
  return [
    () => void server.dropWatches(),
    () => void server.closeWatchesCleanly(),
    () => {
      server.expireHistory();
      server.dropWatches();
    },
    () => {
      server.failNext({ watch: false, status: 500, times: 3 });
      server.dropWatches();
    },
    () => {
      server.delayNext({ watch: false, ms: 800, times: 3 });
      server.dropWatches();
    },
    () => {
      // The next watches are accepted and never answered: only the inactivity timeout helps.
      server.hangNext({ watch: true, times: 2 });
      server.dropWatches();
    },
    async () => {
      let from = 0;
      await server.restart({
        whileDown: (down) => {
          from = Date.now();
          for (let change = 0; change < 4; change++) {
            const object = pick(builders)();
            if (random() < 0.3) remove(down, object);
            else apply(down, object);
          }
        },
        downForMs: OUTAGE_MS,
      });
      outages.push({ from, to: Date.now() });
    },
  ];
}

/** 60 steps of changes and faults, then every fault not yet run (the outage always, last). */
async function blowStorm(storm: Storm): Promise<{ changes: number; faultsRun: number[] }> {
  const { server, random, pick, builders } = storm;
  const faults = stormFaults(storm);
  const faultsRun: number[] = [];
  let changes = 0;
  for (let step = 0; step < 60; step++) {
    const roll = random();
    if (roll < 0.15) {
      const fault = Math.floor(random() * faults.length);
      faultsRun.push(fault);
      await faults[fault]();
      continue;
    }
    changes++;
    if (roll < 0.3) remove(server, pick(builders)());
    else apply(server, pick(builders)());
    await new Promise((resolve) => setTimeout(resolve, random() * 40));
  }
  // Every storm has every fault at least once, the outage last, so health is tested while the
  // server is away.
  for (let fault = 0; fault < faults.length; fault++) {
    if (faultsRun.includes(fault) && fault !== faults.length - 1) continue;
    faultsRun.push(fault);
    await faults[fault]();
    for (let change = 0; change < 3; change++) apply(server, pick(builders)());
  }
  return { changes, faultsRun };
}

/** Samples /resources/health every 40 ms until `stop()`. */
function sampleHealth(base: string): { samples: HealthSample[]; stop: () => Promise<void> } {
  const samples: HealthSample[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const response = await fetch(`${base}/resources/health`).catch(() => null);
      if (response)
        samples.push({ at: Date.now(), status: ((await response.json()) as { status: string }).status });
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
  })();
  return {
    samples,
    stop: async () => {
      sampling = false;
      await sampler;
    },
  };
}

/** Waits (15 s at most) until the index equals the server's objects and health says healthy. */
async function awaitConvergence(
  seed: number,
  server: KubernetesApiTestServer,
  controller: RunningController,
  samples: HealthSample[],
): Promise<void> {
  const deadline = Date.now() + 15_000;
  let last = '';
  for (;;) {
    const truth = serverTruth(server);
    const seen = namespaceViews(controller.index);
    const health = samples.at(-1)?.status;
    if (JSON.stringify(truth) === JSON.stringify(seen) && health === 'healthy') return;
    last = `health ${health}; expected\n${truth.join('\n')}\nindexed\n${seen.join('\n')}`;
    if (Date.now() > deadline) throw new Error(`seed ${seed}: no convergence within 15 s: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Truthful health: never `healthy` while the API server is away (after a detection delay),
 * `unhealthy` at some point in each outage, and `healthy` from convergence on.
 */
function expectTruthfulHealth(
  seed: number,
  samples: HealthSample[],
  outages: Storm['outages'],
  converged: number,
): void {
  for (const outage of outages) {
    const during = samples.filter(
      (sample) => sample.at >= outage.from + DETECTION_MS && sample.at <= outage.to,
    );
    expect({
      seed,
      outage,
      healthyWhileDown: during.filter((sample) => sample.status === 'healthy').length,
    }).toEqual({
      seed,
      outage,
      healthyWhileDown: 0,
    });
    expect(
      samples.some(
        (sample) => sample.at >= outage.from && sample.at <= outage.to + 200 && sample.status === 'unhealthy',
      ),
    ).toBe(true);
  }
  expect(samples.filter((sample) => sample.at > converged).map((sample) => sample.status)).not.toContain(
    'unhealthy',
  );
}

async function runStorm(seed: number): Promise<void> {
  const random = randomFrom(seed);
  const pick: Pick = (items) => items[Math.floor(random() * items.length)];
  const storm: Storm = {
    server: new KubernetesApiTestServer({ bookmarkIntervalMs: 200 }),
    random,
    pick,
    builders: objectsFor(pick, random),
    outages: [],
  };
  const { server, outages } = storm;
  await server.start();
  for (let step = 0; step < 20; step++) apply(server, pick(storm.builders)());
  const controller: RunningController = await startClusterController(server, {
    timing: FAST,
    crdRescanDelayMs: 50,
    syncWaitMs: 2_000,
  });
  const base = `http://127.0.0.1:${controller.port}`;
  const health = sampleHealth(base);
  const { samples } = health;

  try {
    const { changes, faultsRun } = await blowStorm(storm);
    await awaitConvergence(seed, server, controller, samples);
    const converged = Date.now();
    const counts = (statuses: string[]) =>
      ['healthy', 'degraded', 'unhealthy'].map(
        (status) => `${statuses.filter((entry) => entry === status).length} ${status}`,
      );
    console.log(
      `storm seed ${seed}: ${changes} changes, faults #${faultsRun.join(',')}, ${outages.length} outages; ` +
        `${serverTruth(server).length} entries converged ${converged - outages[outages.length - 1].to} ms after the last outage; ` +
        `health samples: ${counts(samples.map((sample) => sample.status)).join(', ')}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await health.stop();

    expectTruthfulHealth(seed, samples, outages, converged);
    // The last known index stays readable during outages; readiness is about the first sync.
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
  } finally {
    await health.stop();
    await controller.close();
    await server.stop();
  }
}

describe('controller under API faults', () => {
  it.each([7, 42])(
    'converges to the server after a storm of changes and faults (seed %i), health truthful throughout',
    async (seed) => {
      await runStorm(seed);
    },
    60_000,
  );

  it('keeps answering from the last known index while the API server is down, and says so', async () => {
    const server = new KubernetesApiTestServer();
    await server.start();
    server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    server.create({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'deny-all', namespace: 'shop' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    });
    const controller = await startClusterController(server, { timing: FAST });
    const base = `http://127.0.0.1:${controller.port}`;
    try {
      await server.stop();
      const deadline = Date.now() + 3_000;
      let health = '';
      while (health !== 'unhealthy' && Date.now() < deadline) {
        health = ((await (await fetch(`${base}/resources/health`)).json()) as { status: string }).status;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(health).toBe('unhealthy');
      const apiHealth = await fetch(`${base}/api/v1/health`);
      expect(await apiHealth.json()).toEqual({ status: 'unhealthy', synced: true });
      const report = await fetch(`${base}/resources/reports/shop`);
      expect(report.status).toBe(200);
      expect(((await report.json()) as { constraintCount: number }).constraintCount).toBe(1);
      const list = await fetch(`${base}/api/v1/constraints?namespace=shop`);
      expect(((await list.json()) as { constraints: unknown[] }).constraints).toHaveLength(1);
    } finally {
      await controller.close();
      await server.stop();
    }
  }, 30_000);
});
