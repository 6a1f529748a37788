import type { RunningController } from '../../../services/controller/runtime';
import type { KubernetesObject } from '../../../services/model/kubernetes';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import {
  startControllerOnTestServer,
  type ControllerOnTestServer,
} from '../../support/controller-on-test-server';
import { labelledDeployment as deployment } from '../../support/required-label-policy';
import { waitUntil } from '../../support/kubernetes-api/wait-until';

// Back-to-back changes of one cluster-wide policy through the watch path (cluster source,
// reflectors, ingestion, the tracker's sliced reach): the last version wins once the controller has
// caught up, whatever the earlier versions reached (issue 35; the interleavings between slices are
// tested in services/controller/risks/policy-change-slices.test.ts).

const NAMESPACES = 40;
const GOLD = { tier: 'gold' };
const isGold = (position: number) => position % 4 === 0;

const CLUSTER_POLICY_CRD: KubernetesObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'clusterpolicies.kyverno.io' },
  spec: {
    group: 'kyverno.io',
    scope: 'Cluster',
    names: {
      kind: 'ClusterPolicy',
      plural: 'clusterpolicies',
      singular: 'clusterpolicy',
      listKind: 'ClusterPolicyList',
    },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
  },
};

/** Deployments of the namespaces with these labels ({}: every namespace) need an `owner` label. */
function requireOwner(
  action: 'Enforce' | 'Audit',
  namespaceLabels: Record<string, string>,
): KubernetesObject {
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'ClusterPolicy',
    metadata: { name: 'require-owner' },
    spec: {
      validationFailureAction: action,
      rules: [
        {
          name: 'require-owner',
          match: {
            any: [
              { resources: { kinds: ['Deployment'], namespaceSelector: { matchLabels: namespaceLabels } } },
            ],
          },
          validate: {
            message: 'an owner label is required',
            pattern: { metadata: { labels: { owner: '?*' } } },
          },
        },
      ],
    },
  };
}

describe('back-to-back changes of a cluster-wide policy through the watch path', () => {
  const server = new KubernetesApiTestServer();
  let controller: RunningController;
  let running: ControllerOnTestServer | undefined;

  beforeAll(async () => {
    await server.start();
    server.create(CLUSTER_POLICY_CRD);
    for (let position = 0; position < NAMESPACES; position++) {
      const name = `team-${position}`;
      server.create({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: isGold(position) ? GOLD : {} },
      });
      server.create(deployment(name, 'web'));
    }
    running = await startControllerOnTestServer(server);
    controller = running.controller;
    await controller.risks.idle();
  });

  afterAll(async () => {
    await running?.stop();
    await server.stop();
  });

  /** `team-N warned|rejected` for every workload at risk, over every namespace. */
  function atRisk(): string[] {
    return controller.risks
      .countsByNamespace()
      .flatMap(({ namespace, rejected, warned }) => [
        ...(rejected > 0 ? [`${namespace} rejected`] : []),
        ...(warned > 0 ? [`${namespace} warned`] : []),
      ])
      .sort();
  }

  /** Waits until the index holds the policy's last version (or none) and nothing is pending. */
  async function caughtUp(action: 'Enforce' | 'Audit' | 'absent'): Promise<void> {
    await waitUntil(
      () => {
        const source = controller.index.findSource('kyverno.io', 'ClusterPolicy', null, 'require-owner');
        const spec = source?.spec as { validationFailureAction?: string } | undefined;
        const indexed = action === 'absent' ? source === undefined : spec?.validationFailureAction === action;
        return indexed && controller.risks.status().pending === 0;
      },
      `the policy ${action} and the workloads at risk current`,
      20_000,
      20,
    );
    await controller.risks.idle();
  }

  it('created, widened, deleted and re-created as an audit in a row: the audit of the gold namespaces holds', async () => {
    server.create(requireOwner('Enforce', GOLD));
    server.update(requireOwner('Enforce', {}));
    server.delete('kyverno.io/v1', 'ClusterPolicy', undefined, 'require-owner');
    server.create(requireOwner('Audit', GOLD));
    await caughtUp('Audit');
    const gold = Array.from({ length: NAMESPACES }, (_, position) => position)
      .filter(isGold)
      .map((position) => `team-${position} warned`)
      .sort();
    expect(atRisk()).toEqual(gold);
  });

  it('widened to every namespace then deleted in a row: nothing stays at risk', async () => {
    server.update(requireOwner('Enforce', {}));
    server.delete('kyverno.io/v1', 'ClusterPolicy', undefined, 'require-owner');
    await caughtUp('absent');
    expect(atRisk()).toEqual([]);
  });
});
