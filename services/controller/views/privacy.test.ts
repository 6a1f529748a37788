import fc from 'fast-check';
import { ADAPTERS } from '../adapters/registry';
import type { Constraint, ConstraintDraft } from '../../model/constraint';
import { buildConstraintList } from './constraint-list';
import { buildAdmissionCheck } from '../verdicts/admission-check';
import { groupOf, type KubernetesObject } from '../../model/kubernetes';
import type { DetailLevel } from '../../model/api';
import { buildConstraintView, findConstraint } from './constraint-view';
import { buildCapabilities, buildHealth } from './health';
import { buildNamespaceReport } from './report';
import {
  demoClusterObjects,
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
} from '../../../test/support/controller-fixtures';

// Every view of every namespace of the demo cluster, serialised whole at `summary` and `detailed`:
// no name of another namespace's or a cluster-scoped policy, and (at summary) no port, CIDR, host
// or path may appear anywhere — names, summaries, remediation text and commands included.

const objects = demoClusterObjects();
const cluster = indexObjects(objects);
const namespaces = ['shop', 'payments', 'monitoring', 'sandbox'];

function isPolicy(object: KubernetesObject): boolean {
  const group = groupOf(object.apiVersion);
  return ADAPTERS.some(
    (adapter) =>
      adapter.kinds.some((kind) => kind.group === group && kind.kind === object.kind) ||
      (adapter.dynamicGroups ?? []).includes(group),
  );
}

/** Names the viewer of `namespace` must not see: policies elsewhere and cluster-scoped ones. */
function foreignNames(namespace: string): string[] {
  const own = new Set(
    objects
      .filter((object) => object.metadata?.namespace === namespace)
      .map((object) => object.metadata?.name),
  );
  return [
    ...new Set(
      objects
        // A Namespace is a policy source too (Pod Security labels): the viewer's own is not foreign.
        .filter(
          (object) =>
            isPolicy(object) &&
            object.metadata?.namespace !== namespace &&
            !(object.kind === 'Namespace' && object.metadata?.name === namespace),
        )
        .map((object) => object.metadata?.name ?? '')
        // `default` (the mesh-wide PeerAuthentication) is also an English word the LimitRange
        // summary uses ("default cpu=500m"); Forewarn's own webhook is never reported at all.
        .filter((name) => name !== '' && !own.has(name) && !['forewarn-webhook', 'default'].includes(name))
        // A Gatekeeper template is named after its constraint kind, which every level shows.
        .filter(
          (name) =>
            !objects.some((object) => object.kind === 'ConstraintTemplate' && object.metadata?.name === name),
        ),
    ),
  ];
}

/** Port numbers, CIDRs, hosts and paths written in the demo's policies. */
const RULE_DETAILS = [
  '8443',
  '169.254.169.254',
  'api.stripe.com',
  '/debug/',
  '/v1/charges',
  'cluster.local/ns',
  'registry.example.com/',
];

/**
 * `levelOf`: the level of each constraint for one caller (issue 24: `full` where its RBAC lets it
 * `get` the source); absent, every constraint is at `level`.
 */
function everyView(
  namespace: string,
  level: DetailLevel,
  levelOf?: (constraint: Constraint) => DetailLevel,
): string {
  const report = buildNamespaceReport(cluster.index, namespace, level, FIXED_NOW, levelOf);
  const constraintViews = cluster.index
    .constraintsForNamespace(namespace)
    .map((constraint) => findConstraint(cluster.index, namespace, constraint.name, level, levelOf))
    .filter((constraint) => constraint !== undefined)
    .map((constraint) =>
      buildConstraintView(cluster.index, namespace, constraint, levelOf ? levelOf(constraint) : level),
    );
  const state = runtimeStateFor(cluster);
  // The webhook's routes as a caller other than the webhook reads them (issue 24: caller-check).
  const levels = new Map<ConstraintDraft, DetailLevel>(
    cluster.index
      .constraintsForNamespace(namespace)
      .map((constraint) => [constraint, levelOf?.(constraint) ?? level]),
  );
  const callerLevel = levelOf ? (draft: ConstraintDraft) => levels.get(draft) ?? level : undefined;
  const list = buildConstraintList(cluster.index, { namespace }, [], level, callerLevel);
  const checks = ADMITTED.map((object) =>
    buildAdmissionCheck(
      cluster.index,
      { object: { ...object, metadata: { ...object.metadata, namespace } }, operation: 'CREATE' },
      { viewer: { level }, ...(callerLevel ? { levelOf: callerLevel } : {}) },
    ),
  );
  return JSON.stringify([
    report,
    constraintViews,
    list,
    checks,
    buildHealth(cluster.index, state, level),
    buildCapabilities(cluster.index, state),
  ]);
}

/** Objects admitted in every namespace: a bare Pod and a Deployment that sets little. */
const ADMITTED: KubernetesObject[] = [
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: { containers: [{ name: 'web', image: 'nginx' }] },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'api', labels: { app: 'api' } },
    spec: {
      selector: { matchLabels: { app: 'api' } },
      template: {
        metadata: { labels: { app: 'api' } },
        spec: {
          containers: [{ name: 'api', image: 'registry.internal/api:1', ports: [{ containerPort: 80 }] }],
        },
      },
    },
  } as KubernetesObject,
];

function appearing(text: string, tokens: readonly string[]): string[] {
  return tokens.filter((token) =>
    new RegExp(`(?<![\\w-])${token.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?![\\w-])`).test(text),
  );
}

describe('privacy across every view', () => {
  it.each(namespaces)('shows no foreign name, port, CIDR, host or path at summary in %s', (namespace) => {
    const text = everyView(namespace, 'summary');
    expect(appearing(text, foreignNames(namespace))).toEqual([]);
    expect(RULE_DETAILS.filter((detail) => text.includes(detail))).toEqual([]);
  });

  it.each(namespaces)('shows details but still no foreign name at detailed in %s', (namespace) => {
    expect(appearing(everyView(namespace, 'detailed'), foreignNames(namespace))).toEqual([]);
  });

  it('shows rule details from detailed on, and foreign names at full (the test can see them)', () => {
    const detailed = everyView('shop', 'detailed');
    expect(detailed).toContain('8443');
    expect(detailed).toContain('169.254.169.254');
    const full = everyView('shop', 'full');
    expect(
      appearing(full, ['block-cloud-metadata', 'image-signature-check', 'workloads-must-have-owner']),
    ).toHaveLength(3);
    // The admission checks are part of every view: they find verdicts on the objects admitted.
    const checks = (JSON.parse(full) as unknown[])[3] as Array<{ constraints: Array<{ verdict: string }> }>;
    expect(checks.flatMap((check) => check.constraints).some((entry) => entry.verdict === 'violates')).toBe(
      true,
    );
  });
});

/** The key of an object as the source of a constraint names it. */
function objectKey(kind: string, namespace: string | null | undefined, name: string | undefined): string {
  return `${kind}/${namespace ?? ''}/${name ?? ''}`;
}

describe('privacy when levels follow the caller RBAC (issue 24)', () => {
  const policies = objects.filter(isPolicy);

  // Whatever the caller may `get` (any subset of the policy objects), a view at summary shows the
  // names of those objects and of nothing else foreign: never more than `kubectl get` would.
  it('shows no foreign name the caller could not kubectl get, for any set of readable objects', () => {
    fc.assert(
      fc.property(fc.subarray(policies), fc.constantFrom(...namespaces), (readableObjects, namespace) => {
        const readable = new Set(
          readableObjects.map((object) =>
            objectKey(object.kind ?? '', object.metadata?.namespace, object.metadata?.name),
          ),
        );
        // As the controller decides: the source and every object it was described from must be readable.
        const levelOf = (constraint: Constraint): DetailLevel =>
          [constraint.source, ...(constraint.relatedSources ?? [])].every((source) =>
            readable.has(objectKey(source.kind, source.namespace, source.name)),
          )
            ? 'full'
            : 'summary';
        // What `kubectl get` shows the caller: every name written anywhere in the objects it may read.
        const readableText = JSON.stringify(readableObjects);
        const hidden = foreignNames(namespace).filter((name) => appearing(readableText, [name]).length === 0);
        expect(appearing(everyView(namespace, 'summary', levelOf), hidden)).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it('records the objects a constraint is described from, so reading its source alone is not enough', () => {
    const binding = cluster.index
      .allConstraints()
      .find((constraint) => constraint.source.name === 'require-resource-limits-prod');
    expect(binding?.relatedSources).toEqual([
      expect.objectContaining({ kind: 'ValidatingAdmissionPolicy', name: 'require-resource-limits' }),
    ]);
  });

  it('renders exactly the summary views when the caller may read nothing', () => {
    for (const namespace of namespaces)
      expect(everyView(namespace, 'summary', () => 'summary')).toBe(everyView(namespace, 'summary'));
  });

  it('reveals a readable cluster-scoped policy by name, and only that one', () => {
    const readable = 'block-cloud-metadata';
    const text = everyView('shop', 'summary', (constraint) =>
      constraint.source.name === readable ? 'full' : 'summary',
    );
    expect(appearing(text, [readable])).toEqual([readable]);
    expect(appearing(text, ['image-signature-check', 'workloads-must-have-owner'])).toEqual([]);
  });
});
