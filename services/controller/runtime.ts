import { createServer, type Server } from 'node:http';
import type { Logger } from '../logging/logger';
import { AdapterRegistry } from './adapters/registry';
import type { ControllerConfig } from './config';
import { createControllerApp } from './http/app';
import { ConstraintIndex } from './index/constraint-index';
import { Ingestor, ParseErrorCounter } from './index/ingest';
import { ManifestFileSource } from './sources/manifest-files';
import type { ObjectSource } from './sources/source';
import type { FlowObserverState, McpState, RuntimeState } from './views/health';

// Wires one controller: index, ingestion, a source, the HTTP server. I/O pieces are created here
// (or injected by tests) so everything below stays pure.

export interface RunningController {
  index: ConstraintIndex;
  source: ObjectSource;
  httpServer: Server;
  /** The port actually bound (useful with port 0 in tests). */
  port: number;
  runtimeState(): RuntimeState;
  close(): Promise<void>;
}

export interface ControllerOverrides {
  /** A ready-made source (tests); otherwise files or the cluster, from the config. */
  source?: (sink: Ingestor, registry: AdapterRegistry) => ObjectSource;
  clock?: () => Date;
}

export function createSource(
  config: ControllerConfig,
  sink: Ingestor,
  registry: AdapterRegistry,
  logger: Logger,
): ObjectSource {
  if (config.manifests)
    return new ManifestFileSource({ directory: config.manifests, sink, registry, logger });
  throw new Error('the cluster source is not available yet: pass --manifests DIR');
}

function listen(server: Server, port: number, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      const bound = server.address();
      resolve(typeof bound === 'object' && bound ? bound.port : port);
    });
  });
}

export async function startController(
  config: ControllerConfig,
  logger: Logger,
  overrides: ControllerOverrides = {},
): Promise<RunningController> {
  const clock = overrides.clock ?? (() => new Date());
  const startedAt = clock();
  const registry = new AdapterRegistry();
  const index = new ConstraintIndex();
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
    },
    clock,
  );
  const source = overrides.source
    ? overrides.source(ingestor, registry)
    : createSource(config, ingestor, registry, logger);
  const flowObserver: FlowObserverState = {
    enabled: config.flowobserverAddress !== undefined,
    connected: false,
    address: config.flowobserverAddress ?? '',
  };
  const mcp: McpState = { enabled: false, transport: 'sse', port: config.mcpPort };
  const runtimeState = (): RuntimeState => ({
    source: source.status(),
    parseErrors,
    flowObserver,
    mcp,
    startedAt,
  });

  const app = createControllerApp({
    index,
    runtimeState,
    configuredDetailLevel: config.detailLevel,
    clock,
    logger,
  });
  const httpServer = createServer(app);
  httpServer.keepAliveTimeout = 65_000;
  const port = await listen(httpServer, config.port, config.address);
  logger.info({ port, address: config.address }, 'HTTP API listening');
  await source.start();
  logger.info({ constraints: index.totalConstraints() }, 'first sync complete; ready');

  return {
    index,
    source,
    httpServer,
    port,
    runtimeState,
    close: async () => {
      await source.stop();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeIdleConnections();
      });
    },
  };
}
