import { describeTargets } from './admission-rules';

// Issue 31: admission rules are listed as the API server matches them, not as their cross product.

describe('describeTargets', () => {
  it('leaves out pairs no API server serves, unless nothing else is left', () => {
    expect(
      describeTargets([
        { group: '', resource: 'pods' },
        { group: 'apps', resource: 'pods' },
        { group: '', resource: 'deployments' },
        { group: 'apps', resource: 'deployments' },
      ]),
    ).toBe('pods, apps/deployments');
    expect(describeTargets([{ group: 'apps', resource: 'pods' }])).toBe('apps/pods');
  });

  it('names six resources, then how many more', () => {
    const targets = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((name) => ({
      group: 'example.com',
      resource: name,
    }));
    expect(describeTargets(targets)).toBe(
      'example.com/a, example.com/b, example.com/c, example.com/d, example.com/e, example.com/f and 2 more',
    );
  });
});
