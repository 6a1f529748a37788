// Forewarn's defaulting against the real API server's (issue 21): every object of the defaults table
// (test/support/server-defaults-table.ts) is created with a server-side dry run, and what the server
// stores is compared field by field with Forewarn's defaulted copy: every field Forewarn has, the server
// has with the same value; every field the server adds beyond it is one the server sets outside
// defaulting (registry, mutating admission plugins, allocation), each listed below with its reason;
// and every value of the table is the server's. One cluster for the file.
import { isDeepStrictEqual } from 'node:util';
import { startCluster, waitFor, type Cluster } from './harness';
import { withServerDefaults } from '../../services/controller/verdicts/defaulting';
import type { KubernetesObject } from '../../services/model/kubernetes';
import {
  DEFAULTING_NAMESPACE,
  SERVER_DEFAULTS,
  valueAt,
  type FieldPath,
} from '../support/server-defaults-table';

let cluster: Cluster | undefined;

function running(): Cluster {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  return cluster;
}

beforeAll(async () => {
  cluster = await startCluster();
});

afterAll(async () => {
  await cluster?.stop();
});

/** What the server sets that is not defaulting, by where it is and why (docs/decisions.md). */
const SET_OUTSIDE_DEFAULTING: Array<[RegExp, string]> = [
  [/^metadata\.(uid|resourceVersion|creationTimestamp|generation|managedFields)\b/, 'object metadata'],
  [/^status\b/, "the registry's status"],
  [/(^|\.)metadata\.creationTimestamp$/, 'an unset timestamp serialized as null'],
  [/^spec\.(serviceAccountName|serviceAccount)$/, 'ServiceAccount admission'],
  [/^spec\.volumes\[\d+\]\.(name|projected\..*)$/, "ServiceAccount admission's token volume"],
  [/^spec\.(initContainers|containers)\[\d+\]\.volumeMounts\b/, "ServiceAccount admission's token mount"],
  [/^spec\.tolerations\b/, 'DefaultTolerationSeconds admission'],
  [/^spec\.(priority|preemptionPolicy)$/, 'Priority admission'],
  [/^spec\.(clusterIPs?|ipFamilies|ipFamilyPolicy)\b/, 'Service IP allocation'],
  [/^spec\.ports\[\d+\]\.nodePort$/, 'Service node port allocation'],
  // A Job without labels shares its template's label map (SetDefaults_Job), so the selector labels
  // the registry adds to the template show on the Job too.
  [
    /^(spec\.selector|(spec\.template\.)?metadata\.labels)\b.*(controller-uid|job-name)/,
    "the Job registry's selector",
  ],
  [
    /^metadata\.annotations\.deprecated\.daemonset\.template\.generation$/,
    "the DaemonSet registry's annotation",
  ],
  [/^metadata\.finalizers\[\d+\]$/, 'StorageObjectInUseProtection admission (claims)'],
  [/^spec\.finalizers\b/, "the Namespace registry's finalizer"],
];

function pathText(path: FieldPath): string {
  return path
    .map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`))
    .join('')
    .slice(1);
}

/** Every leaf (scalar, empty object or empty list) of a JSON value, with its path. */
function leaves(value: unknown, path: FieldPath = []): Array<[FieldPath, unknown]> {
  if (Array.isArray(value) && value.length > 0)
    return value.flatMap((item, index) => leaves(item, [...path, index]));
  if (typeof value === 'object' && value !== null && Object.keys(value).length > 0)
    return Object.entries(value).flatMap(([key, item]) => leaves(item, [...path, key]));
  return [[path, value]];
}

async function dryRunCreate(object: KubernetesObject): Promise<unknown> {
  const result = await running().kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], {
    stdin: JSON.stringify(object),
  });
  if (result.code !== 0)
    throw new Error(`dry-run create of ${object.kind} ${object.metadata?.name}: ${result.stderr}`);
  return JSON.parse(result.stdout) as unknown;
}

test('the API server stores, for every object of the table, the defaults Forewarn applies', async () => {
  await running().kubectl(['create', 'namespace', DEFAULTING_NAMESPACE]);
  // Pods are admitted only once the controller-manager made the namespace's default ServiceAccount.
  await waitFor(
    async () =>
      (await running().kubectl(['get', 'serviceaccount', 'default', '-n', DEFAULTING_NAMESPACE])).code === 0,
    30_000,
    { description: `default ServiceAccount of ${DEFAULTING_NAMESPACE}` },
  );
  const differing: string[] = [];
  const unexplained: string[] = [];
  const tableMismatches: string[] = [];
  // What the webhook forwards is defaulted already: Forewarn must find nothing to add, so it judges
  // the object itself without copying it (withServerDefaults returns it as it is).
  const copiedAgain: string[] = [];
  let compared = 0;
  for (const { object, expected } of SERVER_DEFAULTS) {
    const name = `${object.kind} ${object.metadata?.name}`;
    const stored = await dryRunCreate(object);
    const defaulted = withServerDefaults(object);
    if (withServerDefaults(stored as KubernetesObject) !== stored) copiedAgain.push(name);
    for (const [path, value] of leaves(defaulted)) {
      compared++;
      const server = valueAt(stored, path);
      if (!isDeepStrictEqual(server, value))
        differing.push(
          `${name} ${pathText(path)}: server ${JSON.stringify(server)}, Forewarn ${JSON.stringify(value)}`,
        );
    }
    for (const [path, value] of leaves(stored)) {
      const text = pathText(path);
      if (valueAt(defaulted, path) !== undefined) continue;
      if (SET_OUTSIDE_DEFAULTING.some(([pattern]) => pattern.test(text))) continue;
      unexplained.push(`${name} ${text}: ${JSON.stringify(value)}`);
    }
    for (const [path, value] of expected) {
      const server = valueAt(stored, path);
      if (!isDeepStrictEqual(server, value))
        tableMismatches.push(
          `${name} ${pathText(path)}: server ${JSON.stringify(server)}, table ${JSON.stringify(value)}`,
        );
    }
  }
  expect({ differing, unexplained, tableMismatches, copiedAgain }).toEqual({
    differing: [],
    unexplained: [],
    tableMismatches: [],
    copiedAgain: [],
  });
  // Not vacuous: hundreds of fields compared across every kind of the table.
  expect(compared).toBeGreaterThan(300);
});
