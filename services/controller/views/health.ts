import {
  ADAPTER_NAMES,
  API_VERSION,
  type AdapterHealth,
  type ApiHealth,
  type Capabilities,
  type DetailLevel,
  type Health,
  type HealthProblem,
  type HealthStatus,
} from '../../model/api';
import type { ConstraintIndex } from '../index/constraint-index';
import type { ParseErrorCounter } from '../index/ingest';
import type { SourceStatus } from '../sources/source';

// Health and capabilities as pure functions of the index and the runtime state (DESIGN.md 6).

export interface FlowObserverState {
  enabled: boolean;
  connected: boolean;
  address: string;
}

export interface McpState {
  enabled: boolean;
  transport: string;
  port: number;
}

export interface RuntimeState {
  source: SourceStatus;
  parseErrors: ParseErrorCounter;
  flowObserver: FlowObserverState;
  mcp: McpState;
  /** Used as `last_scan` before any scan completed, so the field is never "now". */
  startedAt: Date;
}

export function healthStatusOf(state: RuntimeState): HealthStatus {
  if (!state.source.synced || !state.source.connected) return 'unhealthy';
  const adapterTrouble = Object.entries(state.source.adapters).some(
    ([name, adapter]) =>
      adapter !== undefined &&
      adapter.enabled &&
      (adapter.watchFailing || state.parseErrors.failingFor(name as (typeof ADAPTER_NAMES)[number]) > 0),
  );
  if (adapterTrouble || state.source.problems.length > 0) return 'degraded';
  if (state.flowObserver.enabled && !state.flowObserver.connected) return 'degraded';
  return 'healthy';
}

function adapterHealth(state: RuntimeState): Record<string, AdapterHealth> {
  const adapters: Record<string, AdapterHealth> = {};
  for (const name of ADAPTER_NAMES) {
    const adapter = state.source.adapters[name];
    if (!adapter) continue;
    const health: AdapterHealth = {
      enabled: adapter.enabled,
      watched_resources: adapter.watchedResources,
      error_count: state.parseErrors.totalFor(name),
    };
    if (!adapter.enabled) health.reason = adapter.reason ?? 'disabled';
    adapters[name] = health;
  }
  return adapters;
}

function lastScanOf(state: RuntimeState): string {
  return (state.source.lastScan ?? state.startedAt).toISOString();
}

/**
 * Problems name files and objects, so below `full` they keep only what kind of thing is wrong
 * (the adapter, or "manifest file"); operators read the rest at `full` or in the logs.
 */
function renderProblems(problems: HealthProblem[], level: DetailLevel): HealthProblem[] {
  if (level === 'full') return problems;
  return problems.map((problem) => ({
    source: problem.source.includes(': ') ? problem.source.slice(0, problem.source.indexOf(': ')) : 'source',
    message: 'details hidden at this detail level; see the controller log',
    since: problem.since,
  }));
}

export function buildHealth(index: ConstraintIndex, state: RuntimeState, level: DetailLevel): Health {
  return {
    status: healthStatusOf(state),
    adapters: adapterHealth(state),
    flowobserver: { ...state.flowObserver },
    mcp: { ...state.mcp },
    indexer: {
      total_constraints: index.totalConstraints(),
      namespaces_with_constraints: index.namespacesWithConstraints().length,
    },
    last_scan: lastScanOf(state),
    problems: renderProblems(
      [
        ...state.source.problems,
        ...state.parseErrors.failingObjects().map((record) => ({
          source: `${record.adapter}: ${record.object}`,
          message: record.message,
          since: record.at,
        })),
      ],
      level,
    ),
  };
}

export function buildCapabilities(index: ConstraintIndex, state: RuntimeState): Capabilities {
  return {
    version: API_VERSION,
    adapters: ADAPTER_NAMES.filter((name) => state.source.adapters[name]?.enabled === true),
    constraintTypes: index.countsByType(),
    totalConstraints: index.totalConstraints(),
    namespaceCount: index.namespacesWithConstraints().length,
    flowobserverEnabled: state.flowObserver.enabled,
    mcpEnabled: state.mcp.enabled,
    lastScan: lastScanOf(state),
  };
}

export function buildApiHealth(state: RuntimeState): ApiHealth {
  return { status: healthStatusOf(state), synced: state.source.synced };
}
