import { checkManifest, type ConstraintLookup } from '../controller/check/manifest-check';
import { indexLookup } from '../controller/check/index-lookup';
import { controllerLookup } from '../cli/check-command';
import { createControllerApi, parseControllerUrl } from '../cli/controller-api';
import { loadOfflineCluster } from '../cli/offline-index';
import { errorMessage } from '../model/error-message';
import type { CheckObject } from './verdict-policies';

// Where the policy pack's checks come from: the controller's admission check (POST
// /api/v1/admission-check, through a port-forward: the webhook's own question), or, offline, a
// directory of cluster manifests indexed in the pack's process, exactly as `forewarn check` does.
// The policy's config wins over the environment (FOREWARN_URL, FOREWARN_MANIFESTS).

const DEFAULT_URL = 'http://localhost:8080';
const DEFAULT_TIMEOUT_SECONDS = 10;

export function createObjectCheck(env: NodeJS.ProcessEnv): CheckObject {
  // One index per directory for the whole preview: the pack's process lives as long as the preview.
  const offlineLookups = new Map<string, Promise<ConstraintLookup>>();
  const offlineLookup = (directory: string) => {
    let lookup = offlineLookups.get(directory);
    if (!lookup) {
      lookup = loadOfflineCluster(directory).then((cluster) =>
        indexLookup(cluster.index, cluster.findMissingCompanions),
      );
      offlineLookups.set(directory, lookup);
    }
    return lookup;
  };

  return async (urn, object, config) => {
    try {
      const manifests = config.manifests ?? env.FOREWARN_MANIFESTS;
      const lookup =
        manifests !== undefined && manifests !== ''
          ? await offlineLookup(manifests)
          : controllerLookup(
              createControllerApi(
                parseControllerUrl(config.url ?? env.FOREWARN_URL ?? DEFAULT_URL),
                (config.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
              ),
            );
      // JSON is YAML: the object goes through the manifest reader and check core of `forewarn check`.
      const report = await checkManifest(urn, JSON.stringify(object), lookup);
      if (report.problems.length > 0)
        return { unavailable: report.problems.map((problem) => problem.message).join('; ') };
      const [checked] = report.objects;
      if (!checked) return { unavailable: 'the resource has no Kubernetes object to check' };
      return { checked, standing: report.standing.flatMap((namespace) => namespace.constraints) };
    } catch (error) {
      return { unavailable: errorMessage(error) };
    }
  };
}
