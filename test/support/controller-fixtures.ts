import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { AdapterRegistry } from '../../services/controller/adapters/registry';
import { ConstraintIndex } from '../../services/controller/index/constraint-index';
import { Ingestor, ParseErrorCounter } from '../../services/controller/index/ingest';
import { parseManifest } from '../../services/controller/sources/manifest-parsing';
import type { SourceStatus } from '../../services/controller/sources/source';
import type { RuntimeState } from '../../services/controller/views/health';

/** Every object of the demo cluster in examples/manifests, parsed as the manifests source does. */
export function demoClusterObjects(): KubernetesObject[] {
  const directory = path.join(__dirname, '../../examples/manifests');
  return readdirSync(directory)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .flatMap((file) => {
      return parseManifest(file, readFileSync(path.join(directory, file), 'utf8')).objects;
    });
}

export interface IndexedCluster {
  index: ConstraintIndex;
  ingestor: Ingestor;
  parseErrors: ParseErrorCounter;
}

export const FIXED_NOW = new Date('2026-11-22T12:00:00.000Z');

/** An index filled from objects through the real adapters, with a fixed clock. */
export function indexObjects(objects: readonly KubernetesObject[]): IndexedCluster {
  const index = new ConstraintIndex();
  const parseErrors = new ParseErrorCounter();
  const ingestor = new Ingestor(index, new AdapterRegistry(), parseErrors, undefined, () => FIXED_NOW);
  for (const object of objects) ingestor.upsert(object);
  return { index, ingestor, parseErrors };
}

export function syncedSource(overrides: Partial<SourceStatus> = {}): SourceStatus {
  return {
    synced: true,
    connected: true,
    lastScan: FIXED_NOW,
    adapters: { networkpolicy: { enabled: true, watchedResources: 1, watchFailing: false } },
    problems: [],
    ...overrides,
  };
}

export function runtimeStateFor(
  cluster: IndexedCluster,
  source: SourceStatus = syncedSource(),
): RuntimeState {
  return {
    source,
    parseErrors: cluster.parseErrors,
    flowObserver: { enabled: false, connected: false, address: '' },
    mcp: { enabled: false, transport: 'sse', port: 8090 },
    startedAt: new Date('2026-11-22T11:00:00.000Z'),
  };
}
