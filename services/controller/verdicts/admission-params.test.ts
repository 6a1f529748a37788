import type { KubernetesObject } from '../../model/kubernetes';
import { parseParamKinds } from '../../model/param-kinds';
import { indexObjects } from '../../../test/support/controller-fixtures';
import {
  deploymentWithReplicas,
  PARAM_KIND_FLAG_VALUE,
  replicaLimit,
  replicaLimitBinding,
  replicaLimitCrd,
  replicaLimitPolicy,
} from '../../../test/support/replica-limit-params';
import type { ConstraintIndexOptions } from '../index/constraint-index';
import { buildAdmissionCheck } from './admission-check';

// ValidatingAdmissionPolicy params of a custom kind configured with --param-kinds, chosen as the
// API server's CollectParams chooses them, on objects read as --manifests reads them.

const CONFIGURED: ConstraintIndexOptions = { paramKinds: parseParamKinds(PARAM_KIND_FLAG_VALUE) };
const team: KubernetesObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } };

function verdictOn(objects: KubernetesObject[], replicas: number, options = CONFIGURED, namespace = 'team') {
  const { index } = indexObjects([team, ...objects], options);
  const entries = buildAdmissionCheck(index, {
    object: deploymentWithReplicas(replicas, namespace),
    operation: 'CREATE',
  }).constraints.filter((entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding');
  expect(entries).toHaveLength(1);
  return entries[0];
}

describe('ValidatingAdmissionPolicy params of a configured custom kind', () => {
  it('evaluates a named param in the admitted object namespace when the binding names none', () => {
    const objects = [
      replicaLimitCrd(),
      replicaLimit('limit', 3, 'team'),
      replicaLimit('limit', 100, 'elsewhere'),
      replicaLimitPolicy(),
      replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' }),
    ];
    const violation = verdictOn(objects, 5);
    expect(violation.verdict).toBe('violates');
    expect(violation.evidence[0].message).toBe('at most 3 replicas');
    expect(verdictOn(objects, 3).verdict).toBe('passes');
  });

  it('looks in paramRef.namespace when the binding names it', () => {
    const objects = [
      replicaLimitCrd(),
      replicaLimit('limit', 3, 'team'),
      replicaLimit('limit', 10, 'limits'),
      replicaLimitPolicy(),
      replicaLimitBinding({ name: 'limit', namespace: 'limits', parameterNotFoundAction: 'Deny' }),
    ];
    expect(verdictOn(objects, 5).verdict).toBe('passes');
    expect(verdictOn(objects, 11).evidence[0].message).toBe('at most 10 replicas');
  });

  it('evaluates once per param a selector matches, and fails when any of them fails', () => {
    const objects = [
      replicaLimitCrd(),
      replicaLimit('small', 2, 'team', { tier: 'limits' }),
      replicaLimit('medium', 4, 'team', { tier: 'limits' }),
      replicaLimit('ignored', 1, 'team', { tier: 'other' }),
      replicaLimitPolicy(),
      replicaLimitBinding({ selector: { matchLabels: { tier: 'limits' } }, parameterNotFoundAction: 'Deny' }),
    ];
    const both = verdictOn(objects, 5);
    expect(both.verdict).toBe('violates');
    expect(both.evidence.map((item) => item.message).sort()).toEqual([
      'at most 2 replicas',
      'at most 4 replicas',
    ]);
    const one = verdictOn(objects, 3);
    expect(one.evidence.map((item) => item.message)).toEqual(['at most 2 replicas']);
    // `ignored` (maxReplicas 1) is not selected: two replicas pass.
    expect(verdictOn(objects, 2).verdict).toBe('passes');
  });

  it('applies parameterNotFoundAction: Deny goes to the failurePolicy, Allow admits', () => {
    const base = [replicaLimitCrd(), replicaLimit('other', 3, 'team')];
    const deny = verdictOn(
      [
        ...base,
        replicaLimitPolicy('Fail'),
        replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' }),
      ],
      1,
    );
    expect(deny.verdict).toBe('violates');
    expect(deny.evidence[0].message).toContain(
      'no params found for policy binding with `Deny` parameterNotFoundAction',
    );
    const ignored = verdictOn(
      [
        ...base,
        replicaLimitPolicy('Ignore'),
        replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' }),
      ],
      1,
    );
    expect(ignored.verdict).toBe('passes');
    const allow = verdictOn(
      [
        ...base,
        replicaLimitPolicy('Fail'),
        replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Allow' }),
      ],
      50,
    );
    expect(allow).toMatchObject({ verdict: 'passes' });
    expect(allow.reason).toContain('no param named limit');
  });

  it('refuses the references the API server refuses, under the failurePolicy', () => {
    const clusterScoped = [
      replicaLimitCrd('Cluster'),
      replicaLimit('limit', 3, undefined),
      replicaLimitPolicy(),
    ];
    const withNamespace = verdictOn(
      [
        ...clusterScoped,
        replicaLimitBinding({ name: 'limit', namespace: 'team', parameterNotFoundAction: 'Deny' }),
      ],
      1,
    );
    expect(withNamespace.evidence[0].message).toContain(
      'paramRef.namespace must not be provided for a cluster-scoped `paramKind`',
    );
    // Cluster-scoped params are found without a namespace.
    const found = verdictOn(
      [...clusterScoped, replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' })],
      4,
    );
    expect(found.evidence[0].message).toBe('at most 3 replicas');
  });

  it('reads the scope off the objects when no CRD is given, and follows deletes', () => {
    const param = replicaLimit('limit', 3, 'team');
    const objects = [
      param,
      replicaLimitPolicy(),
      replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' }),
    ];
    const { index, ingestor } = indexObjects([team, ...objects], CONFIGURED);
    const check = () =>
      buildAdmissionCheck(index, {
        object: deploymentWithReplicas(5, 'team'),
        operation: 'CREATE',
      }).constraints.filter((entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding')[0];
    expect(check().evidence[0].message).toBe('at most 3 replicas');
    ingestor.upsert(replicaLimit('limit', 8, 'team'));
    expect(check().verdict).toBe('passes');
    ingestor.delete(param);
    expect(check().evidence[0].message).toContain('no params found');
  });

  it('takes the plural from the CRD, whenever it arrives', () => {
    const crd = replicaLimitCrd();
    const spec = crd.spec as { names: Record<string, string> };
    const odd = { ...crd, spec: { ...spec, names: { ...spec.names, plural: 'limitsofreplicas' } } };
    const objects = [
      replicaLimit('limit', 3, 'team'),
      odd,
      replicaLimitPolicy(),
      replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' }),
    ];
    const options = { paramKinds: parseParamKinds('rules.example.com/v1/limitsofreplicas') };
    expect(verdictOn(objects, 5, options).evidence[0].message).toBe('at most 3 replicas');
    // Configured under the default plural, the CRD says the kind is served elsewhere: not read.
    expect(verdictOn(objects, 5).verdict).toBe('unknown');
  });

  it('stays unknown for a kind not configured, naming the flag, and for ConfigMap params', () => {
    const objects = [
      replicaLimitCrd(),
      replicaLimit('limit', 3, 'team'),
      replicaLimitPolicy(),
      replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' }),
    ];
    const unconfigured = verdictOn(objects, 5, {});
    expect(unconfigured).toMatchObject({ verdict: 'unknown' });
    expect(unconfigured.reason).toContain('add their group/version/plural to --param-kinds');
    const configMapPolicy = replicaLimitPolicy();
    (configMapPolicy.spec as Record<string, unknown>).paramKind = { apiVersion: 'v1', kind: 'ConfigMap' };
    const configMap: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'limit', namespace: 'team' },
      data: { maxReplicas: '3' },
    };
    const configMapVerdict = verdictOn(
      [configMap, configMapPolicy, replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' })],
      5,
    );
    expect(configMapVerdict).toMatchObject({ verdict: 'unknown' });
    expect(configMapVerdict.reason).toContain('ConfigMap objects, which Forewarn does not read');
  });
});
