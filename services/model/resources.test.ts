import { isServedTarget } from './resources';

// Issue 31: admission rules are listed as the API server matches them, not as their cross product.

describe('isServedTarget', () => {
  it('refuses a built-in resource in another built-in group', () => {
    expect(isServedTarget({ group: 'apps', resource: 'pods' })).toBe(false);
    expect(isServedTarget({ group: '', resource: 'deployments' })).toBe(false);
    expect(isServedTarget({ group: 'batch', resource: 'deployments' })).toBe(false);
  });

  it('keeps served pairs, wildcards, custom groups and unknown resources', () => {
    expect(isServedTarget({ group: 'apps', resource: 'deployments' })).toBe(true);
    expect(isServedTarget({ group: '', resource: 'pods' })).toBe(true);
    expect(isServedTarget({ group: '*', resource: 'pods' })).toBe(true);
    expect(isServedTarget({ group: 'apps', resource: '*' })).toBe(true);
    expect(isServedTarget({ group: 'example.com', resource: 'pods' })).toBe(true);
    expect(isServedTarget({ group: 'apps', resource: 'widgets' })).toBe(true);
  });
});
