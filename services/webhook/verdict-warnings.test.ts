import { buildWarnings } from '../model/warnings';
import { coalesceIdenticalQueries } from './coalescing';
import { parseConstraintList, type ConstraintQueryResult } from './controller-client';
import { admissionCheckBody, MAX_CHECK_BODY_BYTES, type ControllerQuery } from '../model/admission-query';

// The webhook's side of DESIGN.md 7b: the object goes to the admission check (small enough, CREATE
// or UPDATE), violations are warned first, `passes` is silent, identical bodies share one query.

const identity = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop' };
const object = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' } };

describe('admissionCheckBody', () => {
  it('sends the object for CREATE and the old object too for UPDATE', () => {
    expect(JSON.parse(admissionCheckBody('CREATE', object, null, identity) ?? '')).toEqual({
      operation: 'CREATE',
      object,
    });
    const old = { ...object, spec: { replicas: 1 } };
    expect(JSON.parse(admissionCheckBody('UPDATE', object, old, identity) ?? '')).toEqual({
      operation: 'UPDATE',
      object,
      oldObject: old,
    });
  });

  it('carries who makes the request as userInfo when the review says', () => {
    const requester = { username: 'system:serviceaccount:ci:deployer', groups: ['system:serviceaccounts'] };
    expect(
      JSON.parse(admissionCheckBody('CREATE', object, null, identity, undefined, requester) ?? ''),
    ).toEqual({
      operation: 'CREATE',
      object,
      userInfo: requester,
    });
  });

  it('leaves out managedFields (old object too) and carries the view the webhook asks for', () => {
    const managedFields = [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': {} } }];
    const withOwners = { ...object, metadata: { ...object.metadata, managedFields } };
    const old = { ...withOwners, spec: { replicas: 1 } };
    expect(JSON.parse(admissionCheckBody('UPDATE', withOwners, old, identity, 'warnings') ?? '')).toEqual({
      operation: 'UPDATE',
      view: 'warnings',
      object,
      oldObject: { ...object, spec: { replicas: 1 } },
    });
    // The review's object itself is left as it was.
    expect(withOwners.metadata.managedFields).toBe(managedFields);
  });

  it('fills apiVersion, kind and namespace from the review when the object leaves them out', () => {
    const body = JSON.parse(
      admissionCheckBody('CREATE', { metadata: { name: 'web' } }, null, identity) ?? '',
    );
    expect(body.object).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
    });
  });

  it('falls back to the label query for DELETE, no object, or a body over 1 MiB', () => {
    expect(admissionCheckBody('DELETE', object, null, identity)).toBeUndefined();
    expect(admissionCheckBody('CREATE', null, null, identity)).toBeUndefined();
    const huge = { ...object, data: { blob: 'x'.repeat(MAX_CHECK_BODY_BYTES) } };
    expect(admissionCheckBody('CREATE', huge, null, identity)).toBeUndefined();
    const multiByte = { ...object, data: { blob: 'é'.repeat(MAX_CHECK_BODY_BYTES / 2) } };
    expect(admissionCheckBody('CREATE', multiByte, null, identity)).toBeUndefined();
  });
});

describe('warnings from verdicts', () => {
  it('puts Critical first, within a severity violations before applies/unknown, and gives none for passes', () => {
    const parsed = parseConstraintList({
      constraints: [
        {
          name: 'deny-in',
          severity: 'Critical',
          summary: 'NetworkPolicy denies',
          remediationHint: 'h',
          verdict: 'applies',
        },
        {
          name: 'limits',
          severity: 'Warning',
          summary: 'will get a warning: no limit',
          remediationHint: 'h',
          verdict: 'violates',
        },
        {
          name: 'quota',
          severity: 'Critical',
          summary: 'quota fits',
          remediationHint: 'h',
          verdict: 'passes',
        },
        {
          name: 'rego',
          severity: 'Warning',
          summary: 'Gatekeeper rule',
          remediationHint: 'h',
          verdict: 'unknown',
        },
      ],
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(buildWarnings(parsed.constraints)).toEqual([
      '[CRITICAL] NetworkPolicy denies - h',
      '[WARNING] will get a warning: no limit - h',
      '[WARNING] Gatekeeper rule - h',
    ]);
  });
});

describe('coalescing admission checks', () => {
  it('shares one query between identical bodies, not between different ones', async () => {
    const calls: ControllerQuery[] = [];
    const settle: Array<(result: ConstraintQueryResult) => void> = [];
    const client = coalesceIdenticalQueries({
      query: (query) => {
        calls.push(query);
        return new Promise((resolve) => settle.push(resolve));
      },
      close: async () => undefined,
    });
    const base = { namespace: 'shop', resource: { group: 'apps', resource: 'deployments' }, labels: {} };
    const first = client.query({ ...base, checkBody: '{"object":1}' });
    const second = client.query({ ...base, checkBody: '{"object":1}' });
    void client.query({ ...base, checkBody: '{"object":2}' });
    expect(calls).toHaveLength(2);
    for (const resolve of settle) resolve({ ok: true, constraints: [], skippedEntries: 0 });
    expect(await first).toBe(await second);
  });
});
