import {
  constraintQueryPath,
  decodeConstraintFilter,
  decodeQuerySubject,
  formatLabelsParameter,
  formatResourceParameter,
  type ConstraintQuery,
} from './admission-query';
import { parseResourceTarget } from './resources';

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

describe('decoding what constraintQueryPath encodes', () => {
  const parametersOf = (path: string) => {
    const search = new URL(`http://x${path}`).searchParams;
    return (name: string) => search.get(name) ?? undefined;
  };

  it('reads back namespace, resource, labels and the admitted object', () => {
    const query: ConstraintQuery = {
      namespace: 'shop',
      resource: { group: 'apps', resource: 'deployments' },
      labels: { app: 'web' },
      subject: {
        kind: 'Deployment',
        name: 'web',
        annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
        portNames: ['http', 'metrics'],
      },
    };
    const parameter = parametersOf(constraintQueryPath('', query));
    const filter = decodeConstraintFilter(parameter);
    expect(filter).toEqual({
      ok: true,
      value: {
        namespace: 'shop',
        resource: { group: 'apps', resource: 'deployments' },
        labels: { app: 'web' },
      },
    });
    if (!filter.ok) return;
    expect(decodeQuerySubject(parameter, filter.value)).toEqual({
      ok: true,
      value: {
        kind: 'Deployment',
        apiVersion: 'apps/v1',
        name: 'web',
        namespace: 'shop',
        podLabels: { app: 'web' },
        annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
        portNames: ['http', 'metrics'],
      },
    });
  });

  it('leaves labels undefined when the webhook sent none, so the selector filter stays off', () => {
    const filter = decodeConstraintFilter(
      parametersOf(constraintQueryPath('', { namespace: 'a', resource: null, labels: null })),
    );
    expect(filter).toEqual({ ok: true, value: { namespace: 'a', resource: undefined, labels: undefined } });
  });

  it('reads an empty labels parameter as an object without labels, which only empty selectors match', () => {
    const filter = decodeConstraintFilter(
      parametersOf(constraintQueryPath('', { namespace: 'a', resource: null, labels: {} })),
    );
    expect(filter).toEqual({ ok: true, value: { namespace: 'a', resource: undefined, labels: {} } });
  });

  it.each([
    ['', /namespace is required/],
    ['?namespace=Not_Valid', /invalid namespace/],
    ['?namespace=a&resource=Apps/Deployments', /group\/plural/],
    ['?namespace=a&labels=novalue', /key=value/],
  ])('rejects %s with a reason', (search, reason) => {
    const result = decodeConstraintFilter(parametersOf(`/api/v1/constraints${search}`));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(reason);
  });

  it('rejects annotations that are not a JSON object of strings', () => {
    const parameter = parametersOf('/api/v1/constraints?namespace=a&kind=Pod&name=p&annotations=%5B1%5D');
    expect(decodeQuerySubject(parameter, { namespace: 'a', resource: undefined, labels: undefined }).ok).toBe(
      false,
    );
  });
});
