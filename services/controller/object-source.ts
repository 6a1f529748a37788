import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../logging/logger';
import type { AdapterRegistry } from './adapters/registry';
import type { ControllerConfig } from './config';
import type { Ingestor } from './index/ingest';
import { ClusterSource } from './sources/cluster/cluster-source';
import { COMPANION_CANDIDATES, paramKindCandidates } from './sources/cluster/discovery';
import type { WatchObserver } from './sources/cluster/reflector';
import { ManifestFileSource } from './sources/manifest-files';
import type { ObjectSource } from './sources/source';
import { storedObjectsFor } from './stored-objects';

/** A ready-made source (tests): built from the ingestor, the registry and the watch observer. */
export type SourceFactory = (
  sink: Ingestor,
  registry: AdapterRegistry,
  watchObserver: WatchObserver,
) => ObjectSource;

// Where the controller's objects come from: a directory of manifests or the cluster (through the
// kubeconfig), and where `check` finds the stored object an apply would update.

export function loadKubeConfig(file: string | undefined): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (file) kubeConfig.loadFromFile(file);
  else if (process.env.KUBERNETES_SERVICE_HOST) kubeConfig.loadFromCluster();
  else kubeConfig.loadFromDefault();
  if (!kubeConfig.getCurrentCluster())
    throw new Error(
      'no cluster configured: pass --kubeconfig FILE, run in a cluster, or use --manifests DIR',
    );
  return kubeConfig;
}

export function createSource(
  config: ControllerConfig,
  sink: Ingestor,
  registry: AdapterRegistry,
  logger: Logger,
  watchObserver?: WatchObserver,
): ObjectSource {
  if (config.manifests)
    return new ManifestFileSource({ directory: config.manifests, sink, registry, logger });
  return new ClusterSource({
    kubeConfig: loadKubeConfig(config.kubeconfig),
    sink,
    registry,
    logger,
    rescanIntervalMs: config.rescanIntervalMs,
    extraCandidates: [...COMPANION_CANDIDATES, ...paramKindCandidates(config.paramKinds)],
    watchObserver,
  });
}

/**
 * The configured source (or a test's), and where `check` finds the stored object an apply would
 * update: the cluster, or the objects the source delivers when it is files or a test's.
 */
export function sourceOf(
  config: ControllerConfig,
  overrides: { source?: SourceFactory },
  ingestor: Ingestor,
  registry: AdapterRegistry,
  logger: Logger,
  metrics: { watchObserver: WatchObserver },
) {
  const source = overrides.source
    ? overrides.source(ingestor, registry, metrics.watchObserver)
    : createSource(config, ingestor, registry, logger, metrics.watchObserver);
  const onCluster = overrides.source === undefined && !config.manifests;
  const kubeConfig = onCluster ? loadKubeConfig(config.kubeconfig) : undefined;
  return { source, findExisting: storedObjectsFor(config, ingestor, logger, kubeConfig) };
}
