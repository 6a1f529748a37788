import path from 'node:path';
import { AdapterRegistry } from '../controller/adapters/registry';
import type { FindMissingCompanions } from '../controller/check/index-lookup';
import { ConstraintIndex } from '../controller/index/constraint-index';
import { DEFAULT_INGEST_SETTINGS, Ingestor, ParseErrorCounter } from '../controller/index/ingest';
import { prospectiveFindingsForObject } from '../controller/missing/prospective';
import { MissingResourceTracker } from '../controller/missing/tracker';
import { ManifestFileSource } from '../controller/sources/manifest-files';
import type { KubernetesObject } from '../model/kubernetes';
import type { ParamKindResource } from '../model/param-kinds';
import { silentLogger } from '../logging/logger';
import { usageError } from './exit-codes';
import { errorMessage } from '../model/error-message';
import { compileGatekeeperTemplates } from '../controller/check/gatekeeper-templates';
import { RiskTracker } from '../controller/risks/risk-tracker';

// `forewarn check --manifests DIR`: the cluster as a GitOps repository describes it, indexed in this
// process with the controller's own source, adapters and index, read once (no file watching). The
// companion inventory is kept too, so a checked workload that references something the repository
// lacks gets the same MissingResource warning the controller would give at admission.

export interface OfflineCluster {
  index: ConstraintIndex;
  /** What filled the index: `impact` ingests proposed policies into an overlay with a copy of it. */
  ingestor: Ingestor;
  /** The workloads of DIR, kept for `risks` and `impact`; evaluated only when asked (`evaluate`). */
  risks: RiskTracker;
  /** Adds objects that are not in DIR, e.g. the Namespaces of the manifest being checked. */
  add(objects: readonly KubernetesObject[]): void;
  findMissingCompanions: FindMissingCompanions;
  /** Files and objects under DIR that could not be read: their constraints are missing. */
  problems: string[];
}

export async function loadOfflineCluster(
  directory: string,
  paramKinds: readonly ParamKindResource[] = [],
): Promise<OfflineCluster> {
  const index = new ConstraintIndex({ paramKinds });
  const registry = new AdapterRegistry();
  const parseErrors = new ParseErrorCounter();
  const ingestor = new Ingestor(index, registry, parseErrors);
  const source = new ManifestFileSource({
    directory,
    sink: ingestor,
    registry,
    logger: silentLogger(),
    watchForChanges: false,
  });
  const companions = new MissingResourceTracker(index, {
    debounceMs: 0,
    disabledRules: new Set(),
    meshRootNamespace: DEFAULT_INGEST_SETTINGS.meshRootNamespace,
    defaultContact: DEFAULT_INGEST_SETTINGS.defaultContact,
    // Files can hold any kind, so a kind absent from DIR is really missing.
    canSee: (group, kind) => source.watchesKind(group, kind),
  });
  ingestor.onChange((object, removed) => companions.observe(object, removed));
  const risks = new RiskTracker(index);
  ingestor.onChange((object, removed) => risks.observe(object, removed));
  // Gatekeeper Rego templates: opa from FOREWARN_OPA_PATH, the image's path or PATH.
  const gatekeeperTemplates = compileGatekeeperTemplates(
    (listener) => ingestor.onChange(listener),
    process.env.FOREWARN_OPA_PATH,
  );
  try {
    await source.start();
    // A one-shot check waits for the templates' Rego to compile.
    await gatekeeperTemplates.settled();
  } catch (error) {
    throw usageError(errorMessage(error));
  } finally {
    // No background evaluation in a one-shot command: evaluate once, synchronously, below.
    companions.stop();
  }
  // Workloads already in DIR get their MissingResource findings too (debounce 0: no timer needed).
  companions.evaluate();
  const status = source.status();
  await source.stop();
  return {
    index,
    ingestor,
    risks,
    add: (objects) => {
      for (const object of objects) ingestor.upsert(object);
      companions.evaluate();
    },
    findMissingCompanions: (object, namespace) => prospectiveFindingsForObject(companions, object, namespace),
    problems: [
      ...status.problems.map(
        (problem) =>
          `${path.join(directory, problem.source.replace(/^manifests: /, ''))}: ${problem.message}`,
      ),
      ...parseErrors
        .failingObjects()
        .map((record) => `${record.adapter}: ${record.object}: ${record.message}`),
    ],
  };
}
