import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../logging/process-metrics';
import { ADAPTER_NAMES, CONSTRAINT_TYPES, SEVERITIES, type HealthStatus } from '../model/api';
import type { ConstraintIndex } from './index/constraint-index';
import type { WatchObserver } from './sources/cluster/reflector';
import { healthStatusOf, type RuntimeState } from './views/health';
import type { RequestObserver } from './http/request-observer';
import type { AdmissionMemoOutcome } from './http/admission-check-route';
import type { RiskCounts } from './risks/risk-tracker';
import type { PolicyReportWriteCount } from './risks/policy-report-store';

// Prometheus metrics of the controller (`GET /metrics`, DESIGN.md 2; every metric is described in
// docs/metrics.md). Index, health and parse-error figures are read at scrape time from the same
// state the JSON resources use, so the two never disagree; only events (requests, watch failures
// and restarts) are accumulated. A registry per controller keeps tests and restarts independent.

export interface ControllerMetrics {
  /** Serves the text exposition format. */
  handler: RequestHandler;
  /** Counts every HTTP response; mounted before the routes. */
  requestObserver: RequestObserver;
  /** Counts admission checks by how the memo answered them. */
  admissionMemoObserver: (outcome: AdmissionMemoOutcome) => void;
  /** Counts watch failures and restarts of the cluster source, per adapter. */
  watchObserver: WatchObserver;
  /**
   * Work arrived that is not an HTTP request (a watched change): the event-loop delay is sampled
   * while the process works. HTTP requests note it through `requestObserver`.
   */
  noteActivity: () => void;
  registry: Registry;
}

export interface ControllerMetricsOptions {
  /** Default process metrics (CPU, memory, event loop, file descriptors); on unless false. */
  processMetrics?: boolean;
  /** Open MCP sessions by transport; undefined while the MCP server is off. */
  mcpSessions?: () => Record<string, number> | undefined;
  /** Reviews asked for callers' own RBAC (http/caller-read-access.ts); undefined when it is off. */
  callerReviews?: () => { tokenReviews: number; accessReviews: number; refused: number } | undefined;
  /** Workloads at risk by namespace (risks/risk-tracker.ts); absent when not tracked. */
  risks?: () => readonly RiskCounts[];
  /** PolicyReport writes by kind, operation and outcome (`--policy-reports`); absent when off. */
  policyReportWrites?: () => readonly PolicyReportWriteCount[];
}

const HEALTH_STATUSES: readonly HealthStatus[] = ['healthy', 'degraded', 'unhealthy'];

function registerIndexMetrics(registry: Registry, index: ConstraintIndex): void {
  new Gauge({
    name: 'forewarn_constraints',
    help: 'Constraints in the index, by constraint type and severity (each counted once)',
    labelNames: ['type', 'severity'],
    registers: [registry],
    collect() {
      // Every combination is exported, zeros included, so an alert can tell 0 from "no data".
      const counts = new Map<string, number>();
      for (const constraint of index.allConstraints()) {
        const key = `${constraint.type}/${constraint.severity}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      for (const type of CONSTRAINT_TYPES)
        for (const severity of SEVERITIES)
          this.set({ type, severity }, counts.get(`${type}/${severity}`) ?? 0);
    },
  });
  new Gauge({
    name: 'forewarn_namespaces_with_constraints',
    help: 'Namespaces to which at least one constraint applies',
    registers: [registry],
    collect() {
      this.set(index.namespacesWithConstraints().length);
    },
  });
}

function registerHealthMetrics(registry: Registry, runtimeState: () => RuntimeState): void {
  new Gauge({
    name: 'forewarn_source_synced',
    help: '1 once the source completed its first sync (readiness), else 0',
    registers: [registry],
    collect() {
      this.set(runtimeState().source.synced ? 1 : 0);
    },
  });
  new Gauge({
    name: 'forewarn_health_status',
    help: 'Health status of the controller: 1 for the current status, 0 for the others',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      const current = healthStatusOf(runtimeState());
      for (const status of HEALTH_STATUSES) this.set({ status }, status === current ? 1 : 0);
    },
  });
  new Gauge({
    name: 'forewarn_health_problems',
    help: 'Current problems listed in /resources/health (broken files, unreadable objects, failing watches)',
    registers: [registry],
    collect() {
      const state = runtimeState();
      this.set(state.source.problems.length + state.parseErrors.failingObjects().length);
    },
  });
  new Counter({
    name: 'forewarn_parse_errors_total',
    help: 'Objects an adapter could not read, since the controller started, by adapter',
    labelNames: ['adapter'],
    registers: [registry],
    collect() {
      // The ParseErrorCounter is the source of truth (health's error_count); mirror it exactly.
      const state = runtimeState();
      this.reset();
      for (const adapter of ADAPTER_NAMES)
        if (state.source.adapters[adapter]) this.inc({ adapter }, state.parseErrors.totalFor(adapter));
    },
  });
  new Gauge({
    name: 'forewarn_last_scan_timestamp_seconds',
    help: 'When the last discovery / file scan completed (Unix time); 0 before the first',
    registers: [registry],
    collect() {
      const lastScan = runtimeState().source.lastScan;
      this.set(lastScan ? lastScan.getTime() / 1000 : 0);
    },
  });
}

function registerWatchMetrics(registry: Registry): WatchObserver {
  const failures = new Counter({
    name: 'forewarn_watch_errors_total',
    help: 'Failed lists and watches of the cluster source (each retried with backoff), by adapter',
    labelNames: ['adapter'],
    registers: [registry],
  });
  const restarts = new Counter({
    name: 'forewarn_watch_restarts_total',
    help: 'Lists and watches started again, by adapter and cause (failure, expired = 410 relist, closed = server ended the watch)',
    labelNames: ['adapter', 'cause'],
    registers: [registry],
  });
  for (const adapter of ADAPTER_NAMES) failures.inc({ adapter }, 0);
  return {
    onWatchFailure: (target) => failures.inc({ adapter: target.owner }),
    onWatchRestart: (target, cause) => restarts.inc({ adapter: target.owner, cause }),
  };
}

function registerMcpMetrics(registry: Registry, sessions: () => Record<string, number> | undefined): void {
  new Gauge({
    name: 'forewarn_mcp_sessions',
    help: 'Open MCP (agent protocol) sessions, by transport',
    labelNames: ['transport'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [transport, count] of Object.entries(sessions() ?? {})) this.set({ transport }, count);
    },
  });
}

function registerCallerReviewMetrics(
  registry: Registry,
  reviews: NonNullable<ControllerMetricsOptions['callerReviews']>,
): void {
  new Counter({
    name: 'forewarn_caller_reviews_total',
    help: "Reviews asked for callers' own RBAC since the controller started (issue 24), by kind; refused: not asked because the review budget was spent",
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const counts = reviews();
      this.reset();
      if (!counts) return;
      this.inc({ kind: 'TokenReview' }, counts.tokenReviews);
      this.inc({ kind: 'SubjectAccessReview' }, counts.accessReviews);
      this.inc({ kind: 'refused' }, counts.refused);
    },
  });
}

function registerRiskMetrics(registry: Registry, risks: () => readonly RiskCounts[]): void {
  new Gauge({
    name: 'forewarn_workloads_at_risk',
    help: 'Running workloads that fail a constraint if applied again (issue 35), by namespace and severity: Critical would be rejected, Warning only warned about or audited; namespaces without any are not exported',
    labelNames: ['namespace', 'severity'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { namespace, rejected, warned } of risks()) {
        this.set({ namespace, severity: 'Critical' }, rejected);
        this.set({ namespace, severity: 'Warning' }, warned);
      }
    },
  });
}

function registerPolicyReportMetrics(
  registry: Registry,
  writes: () => readonly PolicyReportWriteCount[],
): void {
  new Counter({
    name: 'forewarn_policy_report_writes_total',
    help: 'PolicyReport and ClusterPolicyReport writes since the controller started (--policy-reports), by kind, operation (create, update, delete) and outcome (ok, failed); unchanged reports are not written',
    labelNames: ['kind', 'operation', 'outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { kind, operation, outcome, count } of writes())
        this.inc({ kind, operation, outcome }, count);
    },
  });
}

// The kubelet's probes and Prometheus's scrapes arrive every few seconds whether or not anyone uses
// the controller: they do not start the event-loop delay sampling (logging/event-loop-delay.ts).
const UPKEEP_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function isUpkeepRequest(url: string | undefined): boolean {
  if (url === undefined) return false;
  const query = url.indexOf('?');
  return UPKEEP_PATHS.has(query < 0 ? url : url.slice(0, query));
}

export function createControllerMetrics(
  index: ConstraintIndex,
  runtimeState: () => RuntimeState,
  options: ControllerMetricsOptions = {},
): ControllerMetrics {
  const registry = new Registry();
  const loopDelay = options.processMetrics !== false ? collectProcessMetrics(registry) : undefined;
  const noteActivity = loopDelay ? () => loopDelay.noteActivity() : () => undefined;
  registerIndexMetrics(registry, index);
  registerHealthMetrics(registry, runtimeState);
  const watchObserver = registerWatchMetrics(registry);
  if (options.mcpSessions) registerMcpMetrics(registry, options.mcpSessions);
  if (options.callerReviews) registerCallerReviewMetrics(registry, options.callerReviews);
  if (options.risks) registerRiskMetrics(registry, options.risks);
  if (options.policyReportWrites) registerPolicyReportMetrics(registry, options.policyReportWrites);

  const requests = new Counter({
    name: 'forewarn_http_requests_total',
    help: 'HTTP responses sent, by route template, method and status code',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'forewarn_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route template',
    labelNames: ['route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 3],
    registers: [registry],
  });

  const memoAnswers = new Counter({
    name: 'forewarn_admission_check_memo_total',
    help: 'Admission checks by how the answer memo served them: hit, miss (computed and kept) or bypass (computed, not kept)',
    labelNames: ['result'],
    registers: [registry],
  });
  for (const result of ['hit', 'miss', 'bypass']) memoAnswers.inc({ result }, 0);
  // One child per outcome, looked up once: this runs on every admission check.
  const memoChildren = {
    hit: memoAnswers.labels({ result: 'hit' }),
    miss: memoAnswers.labels({ result: 'miss' }),
    bypass: memoAnswers.labels({ result: 'bypass' }),
  };
  const admissionMemoObserver = (outcome: AdmissionMemoOutcome) => memoChildren[outcome].inc();

  const requestObserver: RequestObserver = (request, response, route) => {
    if (!isUpkeepRequest(request.url)) noteActivity();
    const stopTimer = durations.startTimer();
    response.once('finish', () => {
      const template = route();
      requests.inc({ route: template, method: request.method ?? 'GET', status: String(response.statusCode) });
      stopTimer({ route: template });
    });
  };

  const handler: RequestHandler = async (_request, response) => {
    response.set('Content-Type', registry.contentType).send(await registry.metrics());
  };

  return { handler, requestObserver, admissionMemoObserver, watchObserver, noteActivity, registry };
}
