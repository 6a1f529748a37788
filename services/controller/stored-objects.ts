import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../logging/logger';
import { isRecord, type KubernetesObject } from '../model/kubernetes';
import { controllerReadTargets } from '../model/watched-kinds';
import type { ParamKindResource } from '../model/param-kinds';
import { namespaceOfObject } from './verdicts/admission-check';
import { isClusterScoped } from './sources/manifest-parsing';
import { KubernetesApiError, KubernetesTransport } from './sources/cluster/api-transport';
import { objectsInCluster, type FindExistingObject } from './verdicts/existing-objects';
import { ObjectsInFiles } from './check/objects-in-files';
import type { Ingestor } from './index/ingest';
import type { ControllerConfig } from './config';

// Where `forewarn check` and the MCP `check` tool find the stored object an apply would update
// (issue 31): on a cluster, one GET with the controller's own credentials, for the kinds it reads
// anyway; with `--manifests`, the objects of the directory as the ingestor sees them.

/** A stored-object read answers within this; past it the object is checked as CREATE. */
const READ_TIMEOUT_MS = 5_000;

export function storedObjectsOnCluster(
  kubeConfig: KubeConfig,
  paramKinds: readonly ParamKindResource[],
  logger: Logger,
): FindExistingObject {
  const transport = new KubernetesTransport(kubeConfig);
  const get = async (path: string): Promise<KubernetesObject | undefined> => {
    try {
      const body = await transport.getJson(path, READ_TIMEOUT_MS);
      return isRecord(body) ? (body as KubernetesObject) : undefined;
    } catch (failure) {
      if (failure instanceof KubernetesApiError && failure.statusCode === 404) return undefined;
      throw failure;
    }
  };
  return objectsInCluster(
    get,
    controllerReadTargets(paramKinds),
    (object) => (isClusterScoped(object.apiVersion, object.kind) ? undefined : namespaceOfObject(object)),
    (failure) =>
      logger.warn({ err: failure }, 'cannot read the stored object of a check; it is checked as a CREATE'),
  );
}

/**
 * Where `check` finds the object an apply would update: the cluster, or the objects the ingestor
 * sees with `--manifests` or a source given by a test (which is then the cluster).
 */
export function storedObjectsFor(
  config: Pick<ControllerConfig, 'manifests' | 'paramKinds'>,
  ingestor: Ingestor,
  logger: Logger,
  /** The cluster's kubeconfig; undefined with `--manifests` or a source given by a test. */
  kubeConfig: KubeConfig | undefined,
): FindExistingObject {
  return config.manifests || !kubeConfig
    ? storedObjectsInFiles(ingestor)
    : storedObjectsOnCluster(kubeConfig, config.paramKinds, logger);
}

/** `--manifests`: the directory's objects, kept as the ingestor sees them. */
export function storedObjectsInFiles(ingestor: Ingestor): FindExistingObject {
  const stored = new ObjectsInFiles();
  ingestor.onChange((object, removed) => stored.observe(object, removed));
  return stored.find;
}
