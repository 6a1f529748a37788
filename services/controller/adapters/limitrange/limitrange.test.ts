import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { renderFullText, renderText } from '../../../model/text';
import { renderConstraintTexts } from '../../../../test/support/render-constraint';
import { limitRangeToConstraints } from './limitrange';
import { fixtureConstraints, onlyConstraint } from '../../../../test/support/adapter-fixtures';

const constraintsOf = fixtureConstraints(
  limitRangeToConstraints,
  path.join(__dirname, 'fixtures/limitranges.yaml'),
);
const onlyConstraintOf = (name: string) => onlyConstraint(constraintsOf(name));

describe('limitrange adapter', () => {
  it('turns a LimitRange into one Info limit constraint without metrics', () => {
    const constraint = onlyConstraintOf('defaults');
    expect(constraint).toMatchObject({
      id: 'limitrange',
      name: 'defaults',
      type: 'ResourceLimit',
      severity: 'Info',
      effect: 'limit',
      adapter: 'limitrange',
      scope: { kind: 'namespace', namespace: 'shop' },
      source: { kind: 'LimitRange', apiVersion: 'v1', name: 'defaults', namespace: 'shop' },
    });
    expect(constraint.metrics).toBeUndefined();
    expect(constraint.tags).toEqual(['limit-range', 'defaults', 'bounds']);
    expect(constraint.resourceTargets).toEqual([
      ...WORKLOAD_RESOURCES,
      { group: '', resource: 'persistentvolumeclaims' },
    ]);
  });

  it('summarises defaults, bounds and ratios per type, resources sorted', () => {
    const constraint = onlyConstraintOf('defaults');
    expect(renderFullText(constraint.summary)).toBe(
      'LimitRange "defaults" sets Container: default cpu=500m memory=512Mi, default request cpu=100m, max cpu=2, max limit/request ratio cpu=4; PersistentVolumeClaim: min storage=1Gi, max storage=50Gi',
    );
    expect(renderFullText(constraint.remediationHint)).toBe(
      'keep container and pod requests and limits and PersistentVolumeClaim storage requests within the min/max of LimitRange "defaults"; values you leave unset get its defaults',
    );
  });

  it('words the hint after what the LimitRange does', () => {
    expect(renderFullText(onlyConstraintOf('defaults-only').remediationHint)).toBe(
      'set container and pod requests and limits explicitly if the defaults of LimitRange "defaults-only" do not fit',
    );
    expect(onlyConstraintOf('defaults-only').tags).toEqual(['limit-range', 'defaults']);
    const claims = onlyConstraintOf('claim-sizes');
    expect(renderFullText(claims.remediationHint)).toBe(
      'keep PersistentVolumeClaim storage requests within the min/max of LimitRange "claim-sizes"',
    );
    expect(claims.resourceTargets).toEqual([{ group: '', resource: 'persistentvolumeclaims' }]);
    expect(claims.tags).toEqual(['limit-range', 'bounds']);
    expect(onlyConstraintOf('pod-max').resourceTargets).toEqual([...WORKLOAD_RESOURCES]);
  });

  it('yields nothing for an empty limits list', () => {
    expect(constraintsOf('empty-limits')).toEqual([]);
  });

  it('gives a kubectl step and a manual step for the namespace owner', () => {
    const [inspect, ask] = onlyConstraintOf('defaults').remediation.steps;
    expect(inspect).toMatchObject({ type: 'cli', requiresPrivilege: 'developer', automated: true });
    expect(renderFullText(inspect.command ?? [])).toBe('kubectl get limitrange defaults -n shop -o yaml');
    expect(ask).toMatchObject({ type: 'manual', requiresPrivilege: 'namespace-admin', automated: false });
  });

  it('hides names and figures at summary level from other namespaces, shows them at full', () => {
    const constraint = onlyConstraintOf('defaults');
    const foreign = renderConstraintTexts(constraint, { level: 'summary', namespace: 'some-other-ns' });
    expect(foreign).not.toMatch(/defaults"|shop|500m|512Mi|100m|50Gi|1Gi|cpu=/);
    expect(renderText(constraint.summary, { level: 'summary', namespace: 'shop' })).toBe(
      'LimitRange "defaults" sets Container: values hidden; PersistentVolumeClaim: values hidden',
    );
    const full = renderConstraintTexts(constraint, { level: 'full', namespace: 'some-other-ns' });
    for (const expected of ['"defaults"', 'shop', 'cpu=500m', 'storage=50Gi'])
      expect(full).toContain(expected);
  });

  it.each([
    ['bad-type', /spec\.limits\[0\]\.type is "Node"/],
    ['missing-type', /spec\.limits\[0\]\.type is missing/],
    ['bad-quantity', /spec\.limits\[0\]\.max\.memory/],
    ['limits-not-a-list', /spec\.limits must be a list/],
    ['entry-not-an-object', /spec\.limits\[0\] must be an object/],
    ['default-not-a-map', /spec\.limits\[0\]\.default/],
  ])('rejects malformed %s with a parse error naming the field', (name, message) => {
    expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    expect(() => constraintsOf(name)).toThrow(message);
  });
});
