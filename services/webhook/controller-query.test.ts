import {
  constraintQueryPath,
  formatLabelsParameter,
  formatResourceParameter,
  parseConstraintList,
} from './controller-client';
import { parseResourceTarget } from '../model/resources';

describe('constraintQueryPath', () => {
  it('carries namespace, group/plural resource and sorted labels', () => {
    const path = constraintQueryPath('', {
      namespace: 'shop',
      resource: { group: 'apps', resource: 'deployments' },
      labels: { tier: 'frontend', 'app.kubernetes.io/name': 'web' },
    });
    expect(path).toBe(
      '/api/v1/constraints?namespace=shop&resource=apps%2Fdeployments&labels=app.kubernetes.io%2Fname%3Dweb%2Ctier%3Dfrontend',
    );
    const query = new URL(`http://x${path}`).searchParams;
    expect(query.get('resource')).toBe('apps/deployments');
    expect(query.get('labels')).toBe('app.kubernetes.io/name=web,tier=frontend');
  });

  it('writes a core resource as its bare plural, which the controller parses back to the core group', () => {
    const path = constraintQueryPath('', {
      namespace: 'shop',
      resource: { group: '', resource: 'pods' },
      labels: {},
    });
    expect(path).toBe('/api/v1/constraints?namespace=shop&resource=pods&labels=');
    expect(parseResourceTarget(formatResourceParameter({ group: '', resource: 'pods' }))).toEqual({
      group: '',
      resource: 'pods',
    });
    expect(parseResourceTarget(formatResourceParameter({ group: 'batch', resource: 'cronjobs' }))).toEqual({
      group: 'batch',
      resource: 'cronjobs',
    });
  });

  it('omits resource and labels when unknown, and keeps a base path prefix', () => {
    expect(constraintQueryPath('/forewarn/', { namespace: 'a-b', resource: null, labels: null })).toBe(
      '/forewarn/api/v1/constraints?namespace=a-b',
    );
  });

  it('sends an empty labels parameter for an object without labels, so selectors are not skipped', () => {
    const path = constraintQueryPath('', { namespace: 'shop', resource: null, labels: {} });
    expect(new URL(`http://x${path}`).searchParams.get('labels')).toBe('');
  });

  it('formats labels as k=v pairs joined by commas', () => {
    expect(formatLabelsParameter({ b: '2', a: '1' })).toBe('a=1,b=2');
    expect(formatLabelsParameter({})).toBe('');
  });
});

describe('parseConstraintList', () => {
  const entry = {
    name: 'deny-in/ingress',
    namespace: 'shop',
    constraintType: 'NetworkIngress',
    severity: 'Warning',
    effect: 'deny',
    summary: 'NetworkPolicy "deny-in" denies all ingress traffic',
    remediationHint: 'Add a NetworkPolicy that allows your traffic',
    sourceKind: 'NetworkPolicy',
  };

  it('keeps name, severity, summary and hint of each entry', () => {
    expect(parseConstraintList({ constraints: [entry] })).toEqual({
      ok: true,
      skippedEntries: 0,
      constraints: [
        {
          name: 'deny-in/ingress',
          severity: 'Warning',
          summary: 'NetworkPolicy "deny-in" denies all ingress traffic',
          remediationHint: 'Add a NetworkPolicy that allows your traffic',
        },
      ],
    });
  });

  it('accepts an empty list', () => {
    expect(parseConstraintList({ constraints: [] })).toEqual({
      ok: true,
      constraints: [],
      skippedEntries: 0,
    });
  });

  it.each([
    ['null', null],
    ['an array', [entry]],
    ['no constraints field', { items: [entry] }],
    ['constraints not an array', { constraints: { 0: entry } }],
  ])('rejects %s', (_label, body) => {
    expect(parseConstraintList(body)).toEqual({
      ok: false,
      detail: 'response is not an object with a constraints array',
    });
  });

  it('skips entries without a known severity or a summary, keeping the rest', () => {
    const result = parseConstraintList({
      constraints: [
        entry,
        { ...entry, severity: 'Urgent' },
        { ...entry, summary: 7 },
        'text',
        { ...entry, remediationHint: undefined },
      ],
    });
    expect(result).toMatchObject({ ok: true, skippedEntries: 3 });
    expect(result.ok && result.constraints.map((constraint) => constraint.remediationHint)).toEqual([
      'Add a NetworkPolicy that allows your traffic',
      '',
    ]);
  });
});
