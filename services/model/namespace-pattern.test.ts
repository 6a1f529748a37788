import { scopeAdmits } from '../controller/index/constraint-index';
import type { NamespaceScope } from './constraint';
import { namespaceListMatches, namespaceMatchesPattern } from './namespace-pattern';

describe('namespace patterns (Gatekeeper and Kyverno namespace lists)', () => {
  it.each([
    ['shop', 'shop', true],
    ['shop', 'shop-2', false],
    ['kube-*', 'kube-system', true],
    ['kube-*', 'kube-', true],
    ['kube-*', 'kubernetes', false],
    ['*-system', 'gatekeeper-system', true],
    ['*-system', 'system', false],
    ['team-?', 'team-a', true],
    ['team-?', 'team-ab', false],
    ['*', 'anything', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'aXbY', false],
    ['**', '', true],
  ])('%s against %s is %s', (pattern, namespace, expected) => {
    expect(namespaceMatchesPattern(pattern, namespace)).toBe(expected);
  });

  it('matches a list when any entry does', () => {
    expect(namespaceListMatches(['shop', 'kube-*'], 'kube-public')).toBe(true);
    expect(namespaceListMatches(['shop', 'kube-*'], 'web')).toBe(false);
  });

  it('is used by the index for both namespace lists and exclusions', () => {
    const scope: NamespaceScope = {
      kind: 'cluster',
      namespaces: ['team-*'],
      excludedNamespaces: ['*-sandbox'],
    };
    expect(scopeAdmits(scope, 'team-a', {})).toBe(true);
    expect(scopeAdmits(scope, 'team-a-sandbox', {})).toBe(false);
    expect(scopeAdmits({ kind: 'cluster', namespaces: ['team-*'] }, 'shop', {})).toBe(false);
  });
});
