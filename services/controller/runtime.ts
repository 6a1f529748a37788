import type { Server } from 'node:http';
import { readReferenceKeyFile } from './reference-key-file';
import { errorMessage } from '../model/error-message';
import type { Logger } from '../logging/logger';
import { AdapterRegistry } from './adapters/registry';
import { effectiveApiAuth, type ControllerConfig } from './config';
import { FlowObserverMonitor } from './flow-observer';
import { createControllerApp } from './http/app';
import { startHttpServer, type ListeningHttpServer } from './http/http-listener';
import { startAdmissionWarmUp } from './http/admission-warm-up';
import type { WorkloadDescriptor } from '../model/workload';
import { createControllerMetrics } from './metrics';
import { ConstraintIndex } from './index/constraint-index';
import { Ingestor, ParseErrorCounter } from './index/ingest';
import type { ObjectSource, SourceStatus } from './sources/source';
import { COMPANION_CANDIDATES } from './sources/cluster/discovery';
import { MissingResourceTracker } from './missing/tracker';
import { prospectiveFindings, prospectiveFindingsForObject } from './missing/prospective';
import { startMcpService, type McpServiceOptions, type RunningMcpService } from './mcp/mcp-service';
import type { FlowObserverState, McpState, RuntimeState } from './views/health';
import { createApiAccess, type ApiAccess, type ReviewToken } from './http/api-auth';
import { kubernetesAccessReviewer, type ReviewAccess } from './http/access-review';
import { createCallerReadAccess, type CallerReadAccess } from './http/caller-read-access';
import { kubernetesTokenReviewer } from './http/token-review';
import { regoEngine } from './verdicts/gatekeeper/rego-engine';
import { evaluationIsolate } from './verdicts/guard/evaluation-isolate';
import { loadKubeConfig, sourceOf, type SourceFactory } from './object-source';

export { createSource, loadKubeConfig } from './object-source';
import { compileTemplateOnArrival } from './verdicts/gatekeeper/template-preparation';
import type { RiskTracker } from './risks/risk-tracker';
import { wireRisks } from './risk-wiring';
import { policyReportsIfEnabled } from './policy-report-wiring';
import type { PolicyReportSettings, PolicyReportStore } from './risks/policy-report-store';
import type { PolicyReportPublisher } from './risks/policy-report-publisher';
import { withFields } from '../model/object-copy';

// Wires one controller: index, ingestion, a source, the HTTP server. I/O pieces are created here
// (or injected by tests) so everything below stays pure.

export interface RunningController {
  index: ConstraintIndex;
  missingResources: MissingResourceTracker;
  /** The workloads at risk, evaluated in the background after the first sync (issue 35). */
  risks: RiskTracker;
  source: ObjectSource;
  httpServer: Server;
  /** The port actually bound (useful with port 0 in tests). */
  port: number;
  /** The MCP server, when `--mcp` is on (its `port` is the one bound). */
  mcp?: RunningMcpService;
  /** The PolicyReport writer, when `--policy-reports` is on (issue 35). */
  policyReports?: PolicyReportPublisher;
  runtimeState(): RuntimeState;
  close(): Promise<void>;
}

export interface ControllerOverrides {
  /** A ready-made source (tests); otherwise files or the cluster, from the config. */
  source?: SourceFactory;
  clock?: () => Date;
  /** The TokenReview call of `--api-auth=tokenreview` (tests); otherwise through the kubeconfig. */
  reviewToken?: ReviewToken;
  /** The SubjectAccessReview call of `--caller-rbac` (tests); otherwise through the kubeconfig. */
  reviewAccess?: ReviewAccess;
  /** Where `--policy-reports` writes (tests); otherwise the API server through the kubeconfig. */
  policyReportStore?: PolicyReportStore;
  /** Batch window, retries and limits of `--policy-reports` (tests); otherwise the defaults. */
  policyReportSettings?: PolicyReportSettings;
}

function apiAccessFor(config: ControllerConfig, logger: Logger, overrides: ControllerOverrides) {
  const mode = effectiveApiAuth(config);
  if (mode === 'none' && config.manifests === undefined)
    logger.warn(
      { apiAuth: 'none' },
      '--api-auth=none on a cluster: every caller reads /api/v1/constraints unredacted; use it for local runs only',
    );
  const reviewToken =
    mode === 'tokenreview'
      ? (overrides.reviewToken ?? kubernetesTokenReviewer(loadKubeConfig(config.kubeconfig)))
      : undefined;
  return createApiAccess({
    mode,
    configuredDetailLevel: config.detailLevel,
    webhookServiceAccount: config.webhookServiceAccount,
    reviewToken,
    logger,
  });
}

/** Detail levels that follow the caller's RBAC (issue 24), when `--api-auth=tokenreview` and `--caller-rbac`. */
function callerReadAccessFor(
  config: ControllerConfig,
  logger: Logger,
  overrides: ControllerOverrides,
): CallerReadAccess | undefined {
  if (effectiveApiAuth(config) !== 'tokenreview' || !config.callerRbac || config.detailLevel === 'full')
    return undefined;
  const timeoutMs = config.callerRbacTimeoutMs;
  const kubeConfig = () => loadKubeConfig(config.kubeconfig);
  const maxSockets = 16;
  return createCallerReadAccess({
    reviewToken: overrides.reviewToken ?? kubernetesTokenReviewer(kubeConfig(), { timeoutMs, maxSockets }),
    reviewAccess: overrides.reviewAccess ?? kubernetesAccessReviewer(kubeConfig(), { timeoutMs, maxSockets }),
    ttlMs: config.callerRbacTtlMs,
    timeoutMs,
    maxConcurrentReviews: maxSockets,
    logger,
  });
}

/** Health lists the companion-resource rules as the `missingresource` adapter. */
function withMissingResourceAdapter(status: SourceStatus, source: ObjectSource): SourceStatus {
  const watched = COMPANION_CANDIDATES.filter((candidate) =>
    source.watchesKind(candidate.group, candidate.kind),
  ).length;
  return withFields(status, {
    adapters: withFields(status.adapters, {
      missingresource: {
        enabled: status.synced,
        watchedResources: watched,
        watchFailing: false,
        reason: status.synced ? undefined : 'waiting for the first sync',
      },
    }),
  });
}

/** Shorter keys make the references guessable by trying keys. */
const MINIMUM_REFERENCE_KEY_BYTES = 16;

/**
 * The key of the opaque references: the file's bytes (surrounding whitespace dropped, so a Secret
 * written with a newline works), or a random key, logged, when no file is configured.
 */
function referenceKeyOf(config: ControllerConfig, logger: Logger): Uint8Array | undefined {
  if (config.referenceKeyFile === undefined) {
    logger.info(
      'opaque references of redacted constraints use a random key and change on restart; set --reference-key-file to keep them',
    );
    return undefined;
  }
  let key: Buffer;
  try {
    key = readReferenceKeyFile(config.referenceKeyFile);
  } catch (error) {
    throw new Error(`--reference-key-file ${config.referenceKeyFile} cannot be read: ${errorMessage(error)}`);
  }
  if (key.length < MINIMUM_REFERENCE_KEY_BYTES)
    throw new Error(
      `--reference-key-file ${config.referenceKeyFile} holds ${key.length} bytes; use at least ${MINIMUM_REFERENCE_KEY_BYTES} (e.g. openssl rand -hex 32)`,
    );
  return key;
}

function createIngestion(config: ControllerConfig, logger: Logger, clock: () => Date) {
  const registry = new AdapterRegistry();
  const opaqueReferenceKey = referenceKeyOf(config, logger);
  const index = new ConstraintIndex({
    paramKinds: config.paramKinds,
    ...(opaqueReferenceKey === undefined ? {} : { opaqueReferenceKey }),
  });
  const parseErrors = new ParseErrorCounter();
  parseErrors.onError((record) =>
    logger.warn(
      { adapter: record.adapter, object: record.object, reason: record.message },
      'object could not be read; fix it, the rest stays indexed',
    ),
  );
  const ingestor = new Ingestor(
    index,
    registry,
    parseErrors,
    {
      defaultContact: config.contact,
      ownWebhookName: config.ownWebhook,
      meshRootNamespace: config.meshRootNamespace,
      podSecurityDefaults: config.podSecurityDefaults,
      podSecurityExemptions: {
        namespaces: config.podSecurityExemptNamespaces,
        runtimeClasses: config.podSecurityExemptRuntimeClasses,
      },
    },
    clock,
  );
  // Gatekeeper templates' Rego compiles in the background as templates arrive (before the source starts).
  regoEngine.configure(config.opaPath);
  // The evaluation isolate (JMESPath) starts now, so that no admission waits for it to start.
  void evaluationIsolate.started();
  if (regoEngine.opa === undefined)
    logger.warn(
      { opaPath: config.opaPath ?? null },
      'opa not found: Gatekeeper Rego templates are unknown; put opa on PATH or pass --opa-path',
    );
  else logger.info({ opa: regoEngine.opa }, 'Gatekeeper Rego templates compile with opa');
  ingestor.onChange(compileTemplateOnArrival(regoEngine));
  return { registry, index, parseErrors, ingestor };
}

/** The companion-resource tracker, fed by every ingested change; it only judges kinds the source sees. */
function trackMissingResources(
  config: ControllerConfig,
  ingestor: Ingestor,
  index: ConstraintIndex,
  source: ObjectSource,
  clock: () => Date,
): MissingResourceTracker {
  const missingResources = new MissingResourceTracker(
    index,
    {
      debounceMs: config.missingDebounceMs,
      disabledRules: new Set(config.disabledMissingRules),
      meshRootNamespace: config.meshRootNamespace,
      defaultContact: config.contact,
      canSee: (group, kind) => source.watchesKind(group, kind),
    },
    clock,
  );
  ingestor.onChange((object, removed) => missingResources.observe(object, removed));
  return missingResources;
}

async function startFlowObserver(config: ControllerConfig, logger: Logger) {
  const state: FlowObserverState = {
    enabled: config.flowobserverAddress !== undefined,
    connected: false,
    address: config.flowobserverAddress ?? '',
  };
  const monitor = new FlowObserverMonitor(state, logger);
  await monitor.start();
  return { state, monitor };
}

/** The MCP server when `--mcp` is on; if it cannot start, the HTTP server is closed too. */
async function startMcpIfEnabled(
  config: ControllerConfig,
  logger: Logger,
  state: McpState,
  dependencies: McpServiceOptions['dependencies'],
  httpServer: Server,
  access: { apiAccess: ApiAccess; callerReadAccess: CallerReadAccess | undefined },
  onRequest: () => void,
): Promise<RunningMcpService | undefined> {
  if (!config.mcp) return undefined;
  try {
    return await startMcpService({
      address: config.address,
      port: config.mcpPort,
      state,
      logger,
      dependencies,
      levelFor: (request) => access.apiAccess.levelFor(request),
      ...(access.callerReadAccess ? { callerReadAccess: access.callerReadAccess } : {}),
      onRequest,
    });
  } catch (error) {
    await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    throw error;
  }
}

/** Who reads what: the webhook API's rule and the callers' own RBAC (issue 24). */
function accessRulesFor(config: ControllerConfig, logger: Logger, overrides: ControllerOverrides) {
  return {
    apiAccess: apiAccessFor(config, logger, overrides),
    callerReadAccess: callerReadAccessFor(config, logger, overrides),
  };
}

/** Stops each part in order (background work first, the source, then the server's open requests). */
async function closeController(
  parts: ReadonlyArray<{ stop(): void | Promise<void> } | { close(): Promise<void> } | undefined>,
  listening: ListeningHttpServer,
): Promise<void> {
  for (const part of parts) {
    if (part === undefined) continue;
    await ('close' in part ? part.close() : part.stop());
  }
  await listening.drain();
}

/** What admission checks read besides the index (app, warm-up): companion findings, the source's sync. */
function admissionReadsOf(missingResources: MissingResourceTracker, source: ObjectSource) {
  return {
    prospectiveFindings: (workload: WorkloadDescriptor) => prospectiveFindings(missingResources, workload),
    prospectiveRevision: () => missingResources.inventory.revision,
    isSynced: () => source.isSynced(),
  };
}

export async function startController(
  config: ControllerConfig,
  logger: Logger,
  overrides: ControllerOverrides = {},
): Promise<RunningController> {
  const clock = overrides.clock ?? (() => new Date());
  const startedAt = clock();
  const { registry, index, parseErrors, ingestor } = createIngestion(config, logger, clock);
  const { start: startRisks, ...riskServing } = wireRisks(index, ingestor, registry);
  // Set once MCP is up; the metrics read it at scrape time, which may come before.
  let mcpService: RunningMcpService | undefined = undefined;
  const policyReports = policyReportsIfEnabled(config, logger, riskServing.risks, overrides);
  // Created before the source so its watch counters see the first list; read only at scrape time.
  // One access rule (and one TokenReview cache) for the HTTP API and the MCP port.
  const { apiAccess, callerReadAccess } = accessRulesFor(config, logger, overrides);
  const metrics = createControllerMetrics(index, () => runtimeState(), {
    mcpSessions: () => mcpService?.sessionCounts(),
    callerReviews: () => callerReadAccess?.reviewCounts(),
    risks: () => riskServing.risks.countsByNamespace(),
    ...(policyReports ? { policyReportWrites: () => policyReports.writeCounts() } : {}),
  });
  ingestor.onChange(() => metrics.noteActivity());
  const { source, findExisting } = sourceOf(config, overrides, ingestor, registry, logger, metrics);
  const missingResources = trackMissingResources(config, ingestor, index, source, clock);
  const flowObserver = await startFlowObserver(config, logger);
  const mcp: McpState = { enabled: false, transport: 'sse', port: config.mcpPort };
  const runtimeState = (): RuntimeState => ({
    source: withMissingResourceAdapter(source.status(), source),
    parseErrors,
    flowObserver: flowObserver.state,
    mcp,
    startedAt,
  });
  const served = { index, runtimeState, configuredDetailLevel: config.detailLevel, clock, ...riskServing };
  const admissionReads = admissionReadsOf(missingResources, source);
  const app = createControllerApp({
    ...served,
    logger,
    ...admissionReads,
    metricsHandler: metrics.handler,
    requestObserver: metrics.requestObserver,
    observeAdmissionMemo: metrics.admissionMemoObserver,
    apiAccess,
    callerReadAccess,
    findExisting,
  });
  const listening = await startHttpServer(config, logger, app);
  mcpService = await startMcpIfEnabled(
    config,
    logger,
    mcp,
    {
      ...served,
      findMissingCompanions: (object, namespace) =>
        prospectiveFindingsForObject(missingResources, object, namespace),
      findExisting,
    },
    listening.httpServer,
    { apiAccess, callerReadAccess },
    () => metrics.noteActivity(),
  );
  await source.start();
  logger.info({ constraints: index.totalConstraints() }, 'first sync complete; ready');
  startRisks(listening.httpServer);
  policyReports?.start();
  if (config.warmUp) void startAdmissionWarmUp({ ...served, ...admissionReads }, logger);
  return {
    index,
    missingResources,
    risks: riskServing.risks,
    source,
    httpServer: listening.httpServer,
    port: listening.port,
    mcp: mcpService,
    ...(policyReports ? { policyReports } : {}),
    runtimeState,
    close: () =>
      closeController(
        [policyReports, mcpService, flowObserver.monitor, missingResources, riskServing.risks, source],
        listening,
      ),
  };
}
