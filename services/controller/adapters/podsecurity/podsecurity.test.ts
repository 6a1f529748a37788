import path from 'node:path';
import type { AdapterContext } from '../../../model/constraint';
import {
  parsePodSecurityDefaults,
  podSecurityPolicyOfTags,
  PodSecurityValueError,
} from '../../../model/pod-security';
import { renderFullText, renderText } from '../../../model/text';
import { renderConstraintTexts, testAdapterContext } from '../../../../test/support/render-constraint';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { AdapterRegistry } from '../registry';
import { podSecurityAdapter } from './podsecurity';

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/namespaces.yaml'));
const constraintsOf = (name: string, context: AdapterContext = testAdapterContext()) =>
  podSecurityAdapter.toConstraints(fixture(fixtures, name), context);

describe('podsecurity adapter (Pod Security Admission)', () => {
  it('makes one constraint per mode: enforce Critical, warn Warning, audit Info', () => {
    const constraints = constraintsOf('shop');
    expect(constraints.map((c) => [c.name, c.type, c.severity, c.effect, c.tags])).toEqual([
      [
        'pod-security/enforce',
        'Admission',
        'Critical',
        'deny',
        ['pod-security', 'enforce', 'baseline', 'v1.29'],
      ],
      ['pod-security/warn', 'Admission', 'Warning', 'warn', ['pod-security', 'warn', 'restricted', 'latest']],
      ['pod-security/audit', 'Admission', 'Info', 'audit', ['pod-security', 'audit', 'restricted', 'latest']],
    ]);
    expect(constraints[0]).toMatchObject({
      adapter: 'podsecurity',
      source: { kind: 'Namespace', apiVersion: 'v1', name: 'shop', namespace: 'shop' },
      scope: { kind: 'namespace', namespace: 'shop' },
    });
    expect(constraints[0].workloadSelector).toBeUndefined();
    expect(renderFullText(constraints[0].summary)).toBe(
      'Pod Security Admission enforces PodSecurity "baseline:v1.29" in shop: Pods that break it are rejected; Deployments and other pod controllers are admitted, but their Pods are not created',
    );
    expect(renderFullText(constraints[1].summary)).toBe(
      'Pod Security Admission warns when Pods or pod templates in shop break PodSecurity "restricted:latest"; they are still admitted',
    );
    expect(renderFullText(constraints[1].remediationHint)).toContain('runAsNonRoot: true');
  });

  it('gives privileged nothing, reads an invalid version as latest and an invalid level as restricted', () => {
    const [warn, ...rest] = constraintsOf('infra');
    expect(rest).toHaveLength(0);
    expect(warn.name).toBe('pod-security/warn');
    expect(renderFullText(warn.summary)).toContain('PodSecurity "baseline:latest"');
    const [typo] = constraintsOf('typo');
    expect(typo).toMatchObject({ name: 'pod-security/enforce', severity: 'Critical' });
    expect(typo.tags).toEqual(['pod-security', 'enforce', 'restricted', 'latest', 'invalid-label']);
    expect(renderFullText(typo.summary)).toContain('Pod Security Admission applies restricted');
    expect(constraintsOf('plain')).toEqual([]);
    expect(constraintsOf('version-only')).toEqual([]);
  });

  it('applies the cluster default (--pod-security-default) to namespaces without a level, with their version', () => {
    const context = { ...testAdapterContext(), podSecurityDefaults: parsePodSecurityDefaults('baseline') };
    const [plain, ...rest] = constraintsOf('plain', context);
    expect(rest).toHaveLength(0);
    expect(plain).toMatchObject({ name: 'pod-security/enforce', severity: 'Critical' });
    expect(plain.tags).toContain('cluster-default');
    expect(renderFullText(plain.summary)).toContain(
      'PodSecurity "baseline:latest" in plain (the cluster default',
    );
    expect(renderFullText(constraintsOf('version-only', context)[0].summary)).toContain('"baseline:v1.30"');
    // A namespace's own label wins over the default.
    expect(constraintsOf('infra', context).map((c) => c.name)).toEqual(['pod-security/warn']);
  });

  it('carries the level and version that apply in its tags, for the verdict evaluator', () => {
    const [enforce] = constraintsOf('shop');
    expect(podSecurityPolicyOfTags(enforce.tags)).toEqual({ level: 'baseline', version: 'v1.29' });
    expect(podSecurityPolicyOfTags(constraintsOf('typo')[0].tags)).toEqual({
      level: 'restricted',
      version: 'latest',
    });
    const context = {
      ...testAdapterContext(),
      podSecurityDefaults: parsePodSecurityDefaults('baseline:v1.30'),
    };
    expect(podSecurityPolicyOfTags(constraintsOf('plain', context)[0].tags)).toEqual({
      level: 'baseline',
      version: 'v1.30',
    });
    expect(podSecurityPolicyOfTags(['network'])).toBeUndefined();
  });

  it('parses --pod-security-default values', () => {
    expect(parsePodSecurityDefaults('restricted:v1.28')).toEqual({
      enforce: { level: 'restricted', version: 'v1.28' },
    });
    expect(parsePodSecurityDefaults('enforce=baseline, warn=restricted')).toEqual({
      enforce: { level: 'baseline', version: 'latest' },
      warn: { level: 'restricted', version: 'latest' },
    });
    for (const bad of ['', 'strict', 'baseline:1.28', 'deny=baseline', 'baseline,warn=restricted'])
      expect(() => parsePodSecurityDefaults(bad)).toThrow(PodSecurityValueError);
  });

  it('shows the namespace only to its own viewer; level and mode are what the viewer needs', () => {
    const other = { level: 'summary', namespace: 'elsewhere' } as const;
    for (const constraint of constraintsOf('shop')) {
      const rendered = renderConstraintTexts(constraint, other);
      expect(rendered).not.toContain('shop');
      expect(renderText(constraint.summary, other).length).toBeLessThanOrEqual(300);
    }
    const own = renderText(constraintsOf('shop')[0].summary, { level: 'summary', namespace: 'shop' });
    expect(own).toContain('in shop');
    expect(own).toContain('"baseline:v1.29"');
  });

  it('is routed Namespaces by the registry', () => {
    expect(new AdapterRegistry().adapterFor('', 'Namespace')?.name).toBe('podsecurity');
  });
});
