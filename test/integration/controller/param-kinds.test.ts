import { AdapterRegistry } from '../../../services/controller/adapters/registry';
import { ConstraintIndex } from '../../../services/controller/index/constraint-index';
import { Ingestor } from '../../../services/controller/index/ingest';
import { ClusterSource } from '../../../services/controller/sources/cluster/cluster-source';
import { paramKindCandidates } from '../../../services/controller/sources/cluster/discovery';
import { buildAdmissionCheck } from '../../../services/controller/verdicts/admission-check';
import { silentLogger } from '../../../services/logging/logger';
import { parseParamKinds } from '../../../services/model/param-kinds';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import { EVENTUAL_BOUND_MS, waitUntil } from '../../support/kubernetes-api/wait-until';
import {
  deploymentWithReplicas,
  PARAM_API_VERSION,
  PARAM_KIND_FLAG_VALUE,
  replicaLimit,
  replicaLimitBinding,
  replicaLimitCrd,
  replicaLimitPolicy,
} from '../../support/replica-limit-params';

// Params of a configured custom kind watched through the cluster source on the protocol-faithful
// test API server: the kind is watched once its CRD is served (also when the CRD comes later), and
// every change of a param object changes the verdict.

const FAST = {
  backoffInitialMs: 50,
  backoffMaxMs: 300,
  watchTimeoutSeconds: 30,
  inactivityMs: 5_000,
  listPageSize: 2,
};

describe('param kinds watched on the Kubernetes API test server', () => {
  let server: KubernetesApiTestServer;
  let source: ClusterSource;
  let index: ConstraintIndex;

  async function startSource(): Promise<void> {
    const paramKinds = parseParamKinds(PARAM_KIND_FLAG_VALUE);
    index = new ConstraintIndex({ paramKinds });
    const registry = new AdapterRegistry();
    source = new ClusterSource({
      kubeConfig: server.kubeConfig(),
      sink: new Ingestor(index, registry),
      registry,
      logger: silentLogger(),
      rescanIntervalMs: 60_000,
      timing: FAST,
      crdRescanDelayMs: 50,
      syncWaitMs: 2_000,
      extraCandidates: paramKindCandidates(paramKinds),
    });
    await source.start();
  }

  const verdict = () => {
    const entries = buildAdmissionCheck(index, {
      object: deploymentWithReplicas(5, 'team'),
      operation: 'CREATE',
    }).constraints.filter((entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding');
    return entries[0];
  };
  const eventually = (check: () => boolean, what: string) => waitUntil(check, what, EVENTUAL_BOUND_MS, 20);

  beforeEach(async () => {
    server = new KubernetesApiTestServer({ bookmarkIntervalMs: 200 });
    await server.start();
    server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    server.create(replicaLimitPolicy());
    server.create(replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' }));
  });

  afterEach(async () => {
    await source.stop();
    await server.stop();
  });

  it('lists the params at start and follows their changes and deletes', async () => {
    server.create(replicaLimitCrd());
    server.create(replicaLimit('limit', 3, 'team'));
    await startSource();
    expect(source.watchesKind('rules.example.com', 'ReplicaLimit')).toBe(true);
    expect(verdict()).toMatchObject({ verdict: 'violates' });
    expect(verdict().evidence[0].message).toBe('at most 3 replicas');

    server.patch(PARAM_API_VERSION, 'ReplicaLimit', 'team', 'limit', { maxReplicas: 10 });
    await eventually(() => verdict().verdict === 'passes', 'the raised limit');

    server.delete(PARAM_API_VERSION, 'ReplicaLimit', 'team', 'limit');
    await eventually(
      () => verdict().evidence[0]?.message.includes('no params found') === true,
      'the Deny parameterNotFoundAction',
    );
  });

  it('starts watching the kind when its CRD appears after start', async () => {
    await startSource();
    expect(source.watchesKind('rules.example.com', 'ReplicaLimit')).toBe(false);
    // Configured but not served yet: nothing can be found, so the Deny action decides.
    expect(verdict().evidence[0].message).toContain('no params found');
    server.create(replicaLimitCrd());
    server.create(replicaLimit('limit', 4, 'team'));
    await eventually(() => verdict().evidence[0]?.message === 'at most 4 replicas', 'the new kind watched');
  });
});
