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

/**
 * Kinds whose own messages name them to the caller they reject or warn (the API server for a
 * ValidatingAdmissionPolicy and its binding, Kyverno, Gatekeeper): written here from the engines'
 * messages, independently of model/name-visibility.ts.
 */
const SELF_NAMING_KINDS = new Set([
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'ClusterPolicy',
  'Policy',
  'ValidatingPolicy',
]);

/** Names a caller applying in `namespace` reads in the API server's answer anyway (one naming rule). */
function namedByTheirOwnMessages(namespace: string): Set<string> {
  const names = new Set<string>();
  for (const constraint of cluster.index.constraintsForNamespace(namespace)) {
    if (constraint.effect !== 'deny' && constraint.effect !== 'warn') continue;
    for (const source of [constraint.source, ...(constraint.relatedSources ?? [])])
      if (SELF_NAMING_KINDS.has(source.kind) || groupOf(source.apiVersion) === 'constraints.gatekeeper.sh')
        names.add(source.name);
  }
  return names;
}

/** Foreign names no view may show below `full`: neither in the namespace nor printed by the policy itself. */
function hiddenNames(namespace: string): string[] {
  const named = namedByTheirOwnMessages(namespace);
  return foreignNames(namespace).filter((name) => !named.has(name));
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
    expect(appearing(text, hiddenNames(namespace))).toEqual([]);
    expect(RULE_DETAILS.filter((detail) => text.includes(detail))).toEqual([]);
  });

  it.each(namespaces)('shows details but still no foreign name at detailed in %s', (namespace) => {
    expect(appearing(everyView(namespace, 'detailed'), hiddenNames(namespace))).toEqual([]);
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
        const hidden = hiddenNames(namespace).filter((name) => appearing(readableText, [name]).length === 0);
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
    expect(appearing(text, ['image-signature-check', 'prod-egress-guardrails'])).toEqual([]);
  });
});

describe('one naming rule across views (issue 31)', () => {
  it('names at summary the admission policies that name themselves when they reject or warn there', () => {
    const named = namedByTheirOwnMessages('shop');
    // A ValidatingAdmissionPolicy with its binding, Kyverno and Gatekeeper policies that deny in shop.
    expect([...named]).toEqual(
      expect.arrayContaining([
        'require-resource-limits',
        'require-resource-limits-prod',
        'workloads-must-have-owner',
      ]),
    );
    const summary = everyView('shop', 'summary');
    expect(appearing(summary, [...named])).toEqual([...named]);
    // Network, mesh and webhook configurations print nothing to the caller: hidden in every view.
    expect(
      appearing(summary, ['block-cloud-metadata', 'prod-egress-guardrails', 'image-signature-check']),
    ).toEqual([]);
  });

  it('gives the same name in the report, a constraint view, the list and the admission check', () => {
    const [report, views, list, checks] = JSON.parse(everyView('shop', 'summary')) as [
      { constraints: Array<{ name: string; ref?: string }> },
      Array<{ name: string }>,
      { constraints: Array<{ name: string; ref?: string }> },
      Array<{ constraints: Array<{ name: string; ref?: string }> }>,
    ];
    const binding = 'require-resource-limits-prod';
    expect(report.constraints.find((entry) => entry.name === binding)).toEqual(
      expect.not.objectContaining({ ref: expect.anything() }),
    );
    expect(views.some((view) => view.name === binding)).toBe(true);
    expect(list.constraints.some((entry) => entry.name === binding)).toBe(true);
    expect(checks.flatMap((check) => check.constraints).some((entry) => entry.name === binding)).toBe(true);
    // Whatever stays redacted is redacted everywhere, each time with its reference.
    const redacted = [...report.constraints, ...list.constraints].filter(
      (entry) => entry.name === 'redacted',
    );
    expect(redacted.length).toBeGreaterThan(0);
    expect(redacted.every((entry) => /^fw-[0-9a-f]{16}$/.test(entry.ref ?? ''))).toBe(true);
  });

  it('names policies in the webhook’s warnings by the same rule, keeping the details it fixes by', () => {
    const warnings = JSON.stringify(
      ADMITTED.map((object) =>
        buildAdmissionCheck(
          cluster.index,
          { object: { ...object, metadata: { ...object.metadata, namespace: 'shop' } }, operation: 'CREATE' },
          { view: 'warnings' },
        ),
      ),
    );
    expect(appearing(warnings, hiddenNames('shop'))).toEqual([]);
    expect(warnings).toContain('redacted');
    expect(appearing(warnings, ['require-resource-limits', 'require-requests'])).toHaveLength(2);
    // The egress block only applies (issue 31): no warning, but the check keeps the detail it is fixed by.
    expect(warnings).not.toContain('169.254.169.254');
    const checked = ADMITTED.map((object) =>
      buildAdmissionCheck(cluster.index, {
        object: { ...object, metadata: { ...object.metadata, namespace: 'shop' } },
        operation: 'CREATE',
      }),
    );
    expect(JSON.stringify(checked)).toContain('169.254.169.254');
  });

  it('never offers a command that cannot work: a hidden name turns it into a manual step', () => {
    const [report] = JSON.parse(everyView('shop', 'summary')) as [
      {
        constraints: Array<{
          remediation: {
            steps: Array<{ type: string; command?: string; automated?: boolean; description: string }>;
          };
        }>;
      },
    ];
    const steps = report.constraints.flatMap((entry) => entry.remediation.steps);
    expect(steps.filter((step) => step.command?.includes('redacted'))).toEqual([]);
    const converted = steps.filter((step) =>
      step.description.includes('needs a name hidden at this detail level'),
    );
    expect(converted.length).toBeGreaterThan(0);
    expect(
      converted.every((step) => step.type === 'manual' && step.automated === false && !step.command),
    ).toBe(true);
    // The self-naming policy keeps its working command.
    expect(steps.map((step) => step.command)).toContain(
      'kubectl get validatingadmissionpolicy require-resource-limits -o yaml',
    );
  });
});
