import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from './admission-check';
import type { AdmissionOperation } from './types';

// Issue 31, "the API server's view of the request": an update judged as an update (quota charges
// only the increase, VAP sees oldObject and request.operation), and LimitRange defaults filled in
// before the API server's own validation (request <= limit).

const namespace: KubernetesObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } };

function deployment(replicas: number, resources: Record<string, unknown>): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'web:1', resources }] },
      },
    },
  };
}

function check(
  objects: KubernetesObject[],
  object: KubernetesObject,
  operation: AdmissionOperation = 'CREATE',
  oldObject?: KubernetesObject,
) {
  const { index } = indexObjects([namespace, ...objects]);
  return buildAdmissionCheck(index, { object, operation, ...(oldObject ? { oldObject } : {}) }).constraints;
}

describe('ResourceQuota on UPDATE', () => {
  // 3 pods of 500m run: 1500m used of 3; scaling to 5 adds 1 cpu (2500m in all), which fits.
  const quota: KubernetesObject = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute', namespace: 'team' },
    spec: { hard: { 'requests.cpu': '3', pods: '6' } },
    status: { hard: { 'requests.cpu': '3', pods: '6' }, used: { 'requests.cpu': '1500m', pods: '3' } },
  };
  const running = deployment(3, { requests: { cpu: '500m' } });
  const scaled = deployment(5, { requests: { cpu: '500m' } });

  it('charges only the increase when scaling 3 -> 5 under a quota with room', () => {
    const [asCreate] = check([quota], scaled);
    expect(asCreate.verdict).toBe('violates');
    const [asUpdate] = check([quota], scaled, 'UPDATE', running);
    expect(asUpdate).toMatchObject({ verdict: 'passes', sourceKind: 'ResourceQuota' });
  });

  it('still rejects an increase that does not fit, naming only the increase', () => {
    const [entry] = check([quota], deployment(8, { requests: { cpu: '500m' } }), 'UPDATE', running);
    expect(entry.verdict).toBe('violates');
    expect(entry.evidence[0].message).toBe(
      'would exceed the quota: needs 2500m requests.cpu (8 pods), 1500m left of 3',
    );
  });

  it('never charges a scale down, nor the object count of an existing object', () => {
    const [down] = check([quota], deployment(1, { requests: { cpu: '500m' } }), 'UPDATE', running);
    expect(down.verdict).toBe('passes');
    const full: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'objects', namespace: 'team' },
      spec: { hard: { 'count/configmaps': '2' } },
      status: { hard: { 'count/configmaps': '2' }, used: { 'count/configmaps': '2' } },
    };
    const configMap: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'team' },
      data: { mode: 'b' },
    };
    const created = check([full], configMap).find((entry) => entry.sourceKind === 'ResourceQuota');
    expect(created?.verdict).toBe('violates');
    const updated = check([full], configMap, 'UPDATE', { ...configMap, data: { mode: 'a' } }).find(
      (entry) => entry.sourceKind === 'ResourceQuota',
    );
    expect(updated?.verdict ?? 'not listed').not.toBe('violates');
    // Whether it exists unknown (a kind the controller does not read): undecided, not rejected.
    const { index } = indexObjects([namespace, full]);
    const [mayExist] = buildAdmissionCheck(index, {
      object: configMap,
      operation: 'CREATE',
      mayExist: true,
    }).constraints.filter((entry) => entry.sourceKind === 'ResourceQuota');
    expect(mayExist.verdict).toBe('unknown');
    expect(mayExist.reason).toMatch(
      /count\/configmaps is used up: a new object is rejected, an update of an existing one is not counted/,
    );
  });
});

describe('LimitRange defaults, then the API server validation', () => {
  const defaults: KubernetesObject = {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'defaults', namespace: 'team' },
    spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '100m' } }] },
  };
  const pod = (resources: Record<string, unknown>): KubernetesObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'api', namespace: 'team' },
    spec: { containers: [{ name: 'api', image: 'api:1', resources }] },
  });
  const limitRangeEntry = (object: KubernetesObject) =>
    check([defaults], object).find((entry) => entry.sourceKind === 'LimitRange');

  it('rejects a Pod requesting 700m with no limit under default.cpu 500m, in the server words', () => {
    const entry = limitRangeEntry(pod({ requests: { cpu: '700m' } }));
    expect(entry).toMatchObject({ verdict: 'violates', severity: 'Critical' });
    expect(entry?.evidence).toEqual([
      {
        path: 'spec.containers[0].resources.requests.cpu',
        message:
          'container "api" requests 700m cpu and sets no limit: the default limit 500m is filled in, and the API server refuses a request above its limit (must be less than or equal to cpu limit of 500m)',
      },
    ]);
    expect(entry?.summary).toMatch(/^will be rejected: container "api" requests 700m cpu/);
  });

  it('passes a request at or below the default limit, and a request with its own limit', () => {
    expect(limitRangeEntry(pod({ requests: { cpu: '500m' } }))?.verdict).toBe('passes');
    expect(limitRangeEntry(pod({ requests: { cpu: '700m' }, limits: { cpu: '1' } }))?.verdict).toBe('passes');
  });

  it('says the pods of a Deployment are rejected (the template is not defaulted, its pods are)', () => {
    const entry = check([defaults], deployment(2, { requests: { cpu: '700m' } })).find(
      (candidate) => candidate.sourceKind === 'LimitRange',
    );
    expect(entry?.verdict).toBe('violates');
    expect(entry?.summary).toMatch(/^its pods will be rejected: /);
  });
});

function policy(name: string, spec: Record<string, unknown>): KubernetesObject[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              resources: ['deployments'],
              operations: ['CREATE', 'UPDATE'],
            },
          ],
        },
        ...spec,
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

const policyEntry = (
  objects: KubernetesObject[],
  object: KubernetesObject,
  operation: AdmissionOperation = 'CREATE',
  oldObject?: KubernetesObject,
) =>
  check(objects, object, operation, oldObject).find(
    (entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding',
  );

describe('CEL errors as cel-go treats them', () => {
  // `exempt` fails on an object without labels (no such key): absorbed where the other side decides.
  const exempt = { name: 'exempt', expression: "object.metadata.labels['exempt'] == 'true'" };
  const unlabelled = deployment(2, {});

  it('admits `variables.exempt || <true>` when the variable errors', () => {
    const objects = policy('exempt-or-true', {
      variables: [exempt],
      validations: [{ expression: 'variables.exempt || object.spec.replicas <= 3' }],
    });
    expect(policyEntry(objects, unlabelled)?.verdict).toBe('passes');
  });

  it('rejects `variables.exempt || <false>` with the variable error, as the API server words it', () => {
    const objects = policy('exempt-or-false', {
      variables: [exempt],
      validations: [{ expression: 'variables.exempt || object.spec.replicas <= 1' }],
    });
    const entry = policyEntry(objects, unlabelled);
    expect(entry?.verdict).toBe('violates');
    expect(entry?.evidence[0].message).toMatch(
      /composited variable "exempt" fails to evaluate: .*fails closed/,
    );
  });

  it('absorbs the error in `&&` when the other side is false, and in a variable built on it', () => {
    const objects = policy('and-false', {
      variables: [exempt, { name: 'small', expression: 'variables.exempt || object.spec.replicas <= 3' }],
      validations: [
        { expression: '!(variables.exempt && object.spec.replicas > 100)' },
        { expression: 'variables.small' },
      ],
    });
    expect(policyEntry(objects, unlabelled)?.verdict).toBe('passes');
  });

  it('evaluates a variable only when an expression reads it', () => {
    // `unsupported` calls a function not implemented here: read, it leaves the verdict unknown;
    // skipped by the short circuit, it is never evaluated (cel-go's lazy variables).
    const unsupportedVariable = { name: 'unsupported', expression: 'object.noSuchFunction()' };
    const skipped = policy('lazy', {
      variables: [unsupportedVariable],
      validations: [{ expression: 'object.spec.replicas <= 3 || variables.unsupported' }],
    });
    expect(policyEntry(skipped, unlabelled)?.verdict).toBe('passes');
    const read = policy('eager', {
      variables: [unsupportedVariable],
      validations: [{ expression: 'object.spec.replicas > 3 || variables.unsupported' }],
    });
    expect(policyEntry(read, unlabelled)?.verdict).toBe('unknown');
  });
});

describe('ValidatingAdmissionPolicy on UPDATE', () => {
  const noScaleDown = policy('no-scale-down', {
    validations: [
      {
        expression: "request.operation != 'UPDATE' || object.spec.replicas >= oldObject.spec.replicas",
        message: 'replicas may not go down',
      },
    ],
  });

  it('sees oldObject and request.operation', () => {
    const three = deployment(3, {});
    const two = deployment(2, {});
    expect(policyEntry(noScaleDown, two)?.verdict).toBe('passes');
    expect(policyEntry(noScaleDown, two, 'UPDATE', three)?.verdict).toBe('violates');
    expect(policyEntry(noScaleDown, three, 'UPDATE', two)?.verdict).toBe('passes');
  });

  it('does not apply a policy registered for CREATE only to an update', () => {
    const [createOnly, binding] = policy('create-only', {
      validations: [{ expression: 'object.spec.replicas <= 1' }],
    });
    const spec = createOnly.spec as { matchConstraints: { resourceRules: Array<Record<string, unknown>> } };
    spec.matchConstraints.resourceRules[0].operations = ['CREATE'];
    const three = deployment(3, {});
    expect(policyEntry([createOnly, binding], three)?.verdict).toBe('violates');
    expect(policyEntry([createOnly, binding], three, 'UPDATE', three)?.verdict ?? 'passes').toBe('passes');
  });
});

describe('ValidatingAdmissionPolicy the API server refuses to store', () => {
  it('is not enforced when its paramKind has no apiVersion (written group/version/kind)', () => {
    const objects = policy('replica-limit', {
      paramKind: { group: 'rules.example.com', kind: 'ReplicaLimit', version: 'v1' },
      validations: [{ expression: 'object.spec.replicas <= params.maxReplicas' }],
    });
    const entry = policyEntry(objects, deployment(5, {}));
    expect(entry?.verdict).toBe('passes');
    expect(entry?.reason).toMatch(
      /refuses to store this policy \(strict decoding error: unknown field "spec\.paramKind\.group"/,
    );
  });

  it('is not enforced without an apiVersion', () => {
    const objects = policy('replica-limit', {
      paramKind: { kind: 'ReplicaLimit' },
      validations: [{ expression: 'object.spec.replicas <= params.maxReplicas' }],
    });
    expect(policyEntry(objects, deployment(5, {}))?.reason).toMatch(
      /spec\.paramKind\.apiVersion: Required value/,
    );
  });

  it('rejects on a valid paramKind without paramRef: null params, "no such key" (kube-apiserver v1.34.4)', () => {
    const objects = policy('replica-limit', {
      paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
      validations: [{ expression: 'object.spec.replicas <= params.maxReplicas' }],
    });
    const entry = policyEntry(objects, deployment(5, {}));
    expect(entry?.verdict).toBe('violates');
    expect(entry?.evidence[0].message).toMatch(/maxReplicas.*fails closed/);
  });

  it('evaluates a valid paramKind without paramRef with null params, as the server does', () => {
    const objects = policy('replica-limit', {
      paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
      validations: [{ expression: 'params == null || object.spec.replicas <= params.maxReplicas' }],
    });
    expect(policyEntry(objects, deployment(5, {}))?.verdict).toBe('passes');
  });
});

describe('Kyverno and Gatekeeper on UPDATE', () => {
  it('Kyverno preconditions read request.operation and request.oldObject', () => {
    const rule = {
      name: 'no-scale-down',
      match: { any: [{ resources: { kinds: ['Deployment'] } }] },
      preconditions: { all: [{ key: '{{ request.operation }}', operator: 'Equals', value: 'UPDATE' }] },
      validate: {
        message: 'replicas may not go down',
        deny: {
          conditions: {
            any: [
              {
                key: '{{ request.object.spec.replicas }}',
                operator: 'LessThan',
                value: '{{ request.oldObject.spec.replicas }}',
              },
            ],
          },
        },
      },
    };
    const policy: KubernetesObject = {
      apiVersion: 'kyverno.io/v1',
      kind: 'ClusterPolicy',
      metadata: { name: 'no-scale-down' },
      spec: { validationFailureAction: 'Enforce', rules: [rule] },
    };
    const kyverno = (operation: AdmissionOperation, object: KubernetesObject, oldObject?: KubernetesObject) =>
      check([policy], object, operation, oldObject)
        .filter((entry) => entry.sourceKind === 'ClusterPolicy')
        .map((entry) => entry.verdict);
    // On CREATE the precondition fails: the rule is skipped (not listed or passes, never violates).
    expect(kyverno('CREATE', deployment(2, {}))).not.toContain('violates');
    expect(kyverno('UPDATE', deployment(2, {}), deployment(3, {}))).toEqual(['violates']);
    expect(kyverno('UPDATE', deployment(3, {}), deployment(2, {}))).toEqual(['passes']);
  });

  it('Gatekeeper CEL templates read oldObject on an UPDATE', () => {
    const template: KubernetesObject = {
      apiVersion: 'templates.gatekeeper.sh/v1',
      kind: 'ConstraintTemplate',
      metadata: { name: 'noscaledown' },
      spec: {
        crd: { spec: { names: { kind: 'NoScaleDown' } } },
        targets: [
          {
            target: 'admission.k8s.gatekeeper.sh',
            code: [
              {
                engine: 'K8sNativeValidation',
                source: {
                  validations: [
                    {
                      expression:
                        'oldObject == null || variables.anyObject.spec.replicas >= oldObject.spec.replicas',
                      message: 'replicas may not go down',
                    },
                  ],
                },
              },
            ],
          },
        ],
      },
    };
    const constraint: KubernetesObject = {
      apiVersion: 'constraints.gatekeeper.sh/v1beta1',
      kind: 'NoScaleDown',
      metadata: { name: 'no-scale-down' },
      spec: {
        enforcementAction: 'deny',
        match: { kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }] },
      },
    };
    const gatekeeper = (
      operation: AdmissionOperation,
      object: KubernetesObject,
      oldObject?: KubernetesObject,
    ) =>
      check([template, constraint], object, operation, oldObject)
        .filter((entry) => entry.sourceKind === 'NoScaleDown')
        .map((entry) => entry.verdict);
    expect(gatekeeper('CREATE', deployment(2, {}))).toEqual(['passes']);
    expect(gatekeeper('UPDATE', deployment(2, {}), deployment(3, {}))).toEqual(['violates']);
    expect(gatekeeper('UPDATE', deployment(3, {}), deployment(2, {}))).toEqual(['passes']);
  });
});
