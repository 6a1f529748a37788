import type { Server } from 'node:http';
import type { AdapterRegistry } from './adapters/registry';
import type { ConstraintIndex } from './index/constraint-index';
import type { Ingestor } from './index/ingest';
import type { AnswerImpact } from './http/impact-route';
import { computeImpact } from './risks/impact';
import { pauseAfterSlice } from './risks/background-share';
import { DEFAULT_RISK_SETTINGS, RiskTracker } from './risks/risk-tracker';
import { regoEngine, type RegoEngine } from './verdicts/gatekeeper/rego-engine';
import type { BackgroundPreparation } from './risks/awaiting-preparation';

// The workloads at risk and the impact answer of one controller (issue 35), wired to its ingestion
// and its HTTP server: every ingested change feeds the tracker, and the tracker makes way while the
// server is answering requests.

/** A request within this window counts as the API serving (risks/risk-tracker.ts `serving`). */
const SERVING_WINDOW_MS = 100;

export interface RiskWiring {
  risks: RiskTracker;
  impact: AnswerImpact;
  /**
   * After the first sync: evaluates every workload in the background, making way while `server`
   * answers requests.
   */
  start(server: Server): void;
}

/** A Rego engine's background compilations, as the risk tracker waits on them. */
export function regoPreparation(engine: RegoEngine): BackgroundPreparation {
  return {
    answersWhilePreparing: () => engine.answersGivenWhileCompiling,
    onPrepared: (listener) => engine.onCompilationEnded(listener),
  };
}

export function wireRisks(index: ConstraintIndex, ingestor: Ingestor, registry: AdapterRegistry): RiskWiring {
  // A change of an adapter's retained kind (a policy its bindings use, a template) re-derives other
  // objects' constraints, so it reaches every workload.
  const rederivingKinds = new Set(
    registry.adapters.flatMap((adapter) =>
      (adapter.retainedKinds ?? []).map(({ group, kind }) => `${group}/${kind}`),
    ),
  );
  let lastRequestAt = -Infinity;
  // The event loop's time since the previous slice's pause was decided (background-share.ts).
  let loopMark = performance.eventLoopUtilization();
  const risks = new RiskTracker(index, {
    ...DEFAULT_RISK_SETTINGS,
    serving: () => performance.now() - lastRequestAt < SERVING_WINDOW_MS,
    pauseWhileServing: (sliceMs) => {
      const now = performance.eventLoopUtilization();
      const since = performance.eventLoopUtilization(now, loopMark);
      loopMark = now;
      return pauseAfterSlice(sliceMs, { activeMs: since.active, idleMs: since.idle });
    },
    rederivesOthers: (group, kind) =>
      rederivingKinds.has(`${group}/${kind}`) || rederivingKinds.has(`${group}/*`),
    // A Rego template compiles in the background: workloads judged meanwhile are judged again after.
    preparation: regoPreparation(regoEngine),
  });
  ingestor.onChange((object, removed) => risks.observe(object, removed));
  const answerImpact: AnswerImpact = (objects, options) =>
    computeImpact(
      {
        index,
        ingestor,
        workloads: (namespaces) => risks.keptWorkloads(namespaces),
        objectOf: (workload) => risks.objectOf(workload),
        yieldToRequests: () => new Promise<void>((resolve) => setImmediate(resolve)),
        sliceBudgetMs: DEFAULT_RISK_SETTINGS.sliceBudgetMs,
      },
      objects,
      options,
    );
  return {
    risks,
    impact: answerImpact,
    start: (server) => {
      server.on('request', () => (lastRequestAt = performance.now()));
      risks.start();
    },
  };
}
