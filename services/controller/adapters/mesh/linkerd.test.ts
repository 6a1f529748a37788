import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { ConstraintIndex } from '../../index/constraint-index';
import { Ingestor } from '../../index/ingest';
import { testAdapterContext } from '../../../../test/support/render-constraint';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { AdapterRegistry } from '../registry';
import { meshAdapter } from './mesh';
import { expectNoLeaks } from '../../../../test/support/adapter-fixtures';

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/linkerd-policies.yaml'));
const everything = [...fixtures.values()];
const constraintsOf = (name: string) =>
  meshAdapter.toConstraints(fixture(fixtures, name), testAdapterContext(everything));
const only = (name: string) => {
  const [constraint, ...rest] = constraintsOf(name);
  expect(rest).toHaveLength(0);
  return constraint;
};

describe('mesh adapter (Linkerd)', () => {
  it('makes a Server that no authorization opens a Critical deny-all', () => {
    const constraint = only('admin-port');
    expect(constraint).toMatchObject({
      name: 'admin-port',
      type: 'MeshPolicy',
      severity: 'Critical',
      effect: 'deny',
      adapter: 'mesh',
      workloadSelector: { matchLabels: { app: 'api' } },
      source: { kind: 'Server', apiVersion: 'policy.linkerd.io/v1beta3', namespace: 'shop' },
    });
    expect(renderFullText(constraint.summary)).toBe(
      'Linkerd Server "admin-port" on port 9990 of pods app=api in shop denies all traffic: no AuthorizationPolicy or ServerAuthorization admits a client',
    );
  });

  it('resolves an AuthorizationPolicy and its MeshTLSAuthentication: only those identities (require)', () => {
    const constraint = only('api-http');
    expect([constraint.severity, constraint.effect, constraint.tags]).toEqual([
      'Warning',
      'require',
      ['mesh', 'linkerd', 'mtls-required'],
    ]);
    expect(renderFullText(constraint.summary)).toBe(
      'Linkerd Server "api-http" on port http of pods app=api in shop admits only service accounts frontend, checkout',
    );
    // The other namespace's service account is hidden from the shop viewer below full.
    expect(renderText(constraint.summary, { level: 'detailed', namespace: 'shop' })).toContain(
      'service accounts frontend, redacted',
    );
  });

  it('finds ServerAuthorizations by server selector; networks are details', () => {
    const constraint = only('metrics');
    expect([constraint.severity, constraint.effect]).toEqual(['Warning', 'restrict']);
    expect(constraint.workloadSelector).toBeUndefined();
    expect(renderFullText(constraint.summary)).toBe(
      'Linkerd Server "metrics" on port 4191 of all pods in monitoring admits only unauthenticated clients from 10.0.0.0/8 except 10.96.0.0/12',
    );
  });

  it("follows a Server's accessPolicy when nothing authorizes it", () => {
    const constraint = only('grpc-authenticated');
    expect([constraint.severity, constraint.effect]).toEqual(['Warning', 'require']);
    expect(renderFullText(constraint.summary)).toContain('admits only meshed clients (mTLS)');
  });

  it('yields nothing for authorizations and authentications themselves, but reads them', () => {
    for (const name of ['api-from-frontend', 'frontend-identities', 'metrics-from-nodes', 'cluster-network'])
      expect(constraintsOf(name)).toEqual([]);
  });

  it('hides names, ports, CIDRs and identities at summary', () => {
    const viewer = { level: 'summary', namespace: 'elsewhere' } as const;
    const leaks = [
      'admin-port',
      'api-http',
      'metrics',
      'shop',
      'monitoring',
      '9990',
      '4191',
      'http',
      '10.0.0.0',
      'frontend',
      'checkout',
      'app=api',
    ];
    const names = ['admin-port', 'api-http', 'metrics', 'grpc-authenticated'];
    expectNoLeaks(names.flatMap(constraintsOf), viewer, leaks);
  });

  it.each(['bad-port', 'bad-access', 'bad-client', 'bad-reference'])(
    'rejects malformed %s with a parse error',
    (name) => {
      expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    },
  );

  it('re-evaluates a Server when an authorization for it arrives or goes, through the ingest layer', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry());
    const severityOf = () =>
      index.constraintsForNamespace('shop').find((c) => c.name === 'api-http')?.severity;
    ingestor.upsert(structuredClone(fixture(fixtures, 'api-http')));
    expect(severityOf()).toBe('Critical');
    ingestor.upsert(structuredClone(fixture(fixtures, 'frontend-identities')));
    ingestor.upsert(structuredClone(fixture(fixtures, 'api-from-frontend')));
    expect(severityOf()).toBe('Warning');
    ingestor.delete(structuredClone(fixture(fixtures, 'api-from-frontend')));
    expect(severityOf()).toBe('Critical');
  });
});
