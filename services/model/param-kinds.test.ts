import { ParamKindError, parseParamKinds } from './param-kinds';

describe('parseParamKinds', () => {
  it('accepts a custom resource', () => {
    expect(parseParamKinds('example.com/v1/replicalimits')).toEqual([
      { group: 'example.com', version: 'v1', plural: 'replicalimits' },
    ]);
  });

  it.each([
    'events.k8s.io/v1/events',
    'resource.k8s.io/v1/resourceclaims',
    'apps/v1/deployments',
    'k8s.io/v1/things',
    'policy.kubernetes.io/v1/rules',
  ])('refuses the Kubernetes group of %s', (entry) => {
    expect(() => parseParamKinds(entry)).toThrow(ParamKindError);
  });

  it('does not take a look-alike domain for the Kubernetes project', () => {
    expect(parseParamKinds('cluster.x-k8s.io/v1beta1/limits')).toHaveLength(1);
  });
});
