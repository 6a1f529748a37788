// The hostile policies and objects of issue 32's rows 1, 2, 5, 6, 7 and 12 (isolated-verdicts.test.ts).

export const NAMESPACE = 'team';

export function pod(containers: object[], annotations: Record<string, string> = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'hostile', namespace: NAMESPACE, annotations },
    spec: { containers },
  };
}

export function containers(count: number, image = 'registry.corp.example/app:1'): object[] {
  return Array.from({ length: count }, (_, position) => ({ name: `c${position}`, image }));
}

function kyvernoPolicy(name: string, rule: object): object {
  return {
    apiVersion: 'kyverno.io/v1',
    kind: 'Policy',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      validationFailureAction: 'Enforce',
      rules: [{ name, match: { any: [{ resources: { kinds: ['Pod'] } }] }, ...rule }],
    },
  };
}

/** Row 1: a message that interpolates an object field (the image). */
export const interpolatingPolicy = kyvernoPolicy('trusted-images', {
  validate: {
    message: 'image {{request.object.spec.containers[0].image}} is not from registry.corp.example',
    pattern: { spec: { containers: [{ image: 'registry.corp.example/*' }] } },
  },
});

/** Row 1's Pod: 844 bytes of variables and `String.replace` patterns. */
export const substitutionPod = pod(
  [{ name: 'app', image: '{{request.object.metadata.annotations.x}}'.repeat(16) + '{{request.operation}}' }],
  { x: '$`$`' },
);

/** Row 5: 24 context variables, each the last one twice, then its length as text. */
export const doublingPolicy = kyvernoPolicy('doubling', {
  context: [
    { name: 'v0', variable: { value: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' } },
    ...Array.from({ length: 24 }, (_, index) => ({
      name: `v${index + 1}`,
      variable: { jmesPath: `[v${index}, v${index}]` },
    })),
  ],
  validate: {
    message: 'too long',
    deny: {
      conditions: { any: [{ key: '{{ length(to_string(v24)) }}', operator: 'GreaterThan', value: 0 }] },
    },
  },
});

/** Row 12: a `validate.cel` of about 709 KB. */
export const hugeCelPolicy = kyvernoPolicy('huge-cel', {
  validate: {
    cel: {
      expressions: [
        {
          expression: Array.from(
            { length: 20_000 },
            (_, index) => `object.metadata.name != "n${index}"`,
          ).join(' && '),
          message: 'never reached',
        },
      ],
    },
  },
});

function template(kind: string, rego: string): object {
  return {
    apiVersion: 'templates.gatekeeper.sh/v1',
    kind: 'ConstraintTemplate',
    metadata: { name: kind.toLowerCase() },
    spec: {
      crd: { spec: { names: { kind } } },
      targets: [{ target: 'admission.k8s.gatekeeper.sh', rego }],
    },
  };
}

function constraint(kind: string): object {
  return {
    apiVersion: 'constraints.gatekeeper.sh/v1beta1',
    kind,
    metadata: { name: `${kind.toLowerCase()}-all` },
    spec: { match: { kinds: [{ apiGroups: [''], kinds: ['Pod'] }] } },
  };
}

/** Row 2: a template quadratic in the containers (unique names), and one that loops. */
export const quadraticTemplate = [
  template(
    'K8sUniqueNames',
    `package k8suniquenames
violation[{"msg": msg}] {
  c := input.review.object.spec.containers[i]
  d := input.review.object.spec.containers[j]
  i != j
  c.name == d.name
  msg := sprintf("container name %v is used twice", [c.name])
}`,
  ),
  constraint('K8sUniqueNames'),
];

export const loopingTemplate = [
  template(
    'K8sLooping',
    `package k8slooping
violation[{"msg": msg}] {
  n := count([x | x := numbers.range(1, 100000000)[_]; x > 0])
  n < 0
  msg := "never"
}`,
  ),
  constraint('K8sLooping'),
];

/** Row 6: a width of 200,000,000. */
export const wideSprintfTemplate = [
  template(
    'K8sWide',
    `package k8swide
violation[{"msg": msg}] {
  msg := sprintf("%200000000v", [input.review.object.metadata.name])
}`,
  ),
  constraint('K8sWide'),
];

/** Row 7: a 400 KB template, and an ordinary one queued behind it. */
export const hugeTemplate = [
  template(
    'K8sHuge',
    `package k8shuge
${Array.from({ length: 4_800 }, (_, index) => `violation[{"msg": "rule ${index}"}] { input.review.object.metadata.name == "n${index}" }`).join('\n')}`,
  ),
  constraint('K8sHuge'),
];

export const ordinaryTemplate = [
  template(
    'K8sRequiredOwner',
    `package k8srequiredowner
violation[{"msg": msg}] {
  not input.review.object.metadata.labels.owner
  msg := "the owner label is required"
}`,
  ),
  constraint('K8sRequiredOwner'),
];
