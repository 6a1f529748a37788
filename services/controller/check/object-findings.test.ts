import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkManifest } from './manifest-check';
import { indexLookup } from './index-lookup';
import { demoClusterObjects, indexObjects } from '../../../test/support/controller-fixtures';

// Issue 31: a check's findings are what will happen to the object; standing constraints of its
// namespace come once, and one cause is one finding.

const demo = indexObjects(demoClusterObjects());
const lookup = indexLookup(demo.index);

describe('findings are about the object (issue 31)', () => {
  const compliantApp = readFileSync(path.join(__dirname, '../../../examples/compliant-app.yaml'), 'utf8');

  it('a compliant app has no finding and no warning; its standing constraints come once per namespace', async () => {
    const report = await checkManifest('compliant-app.yaml', compliantApp, lookup);
    expect(
      report.objects.map((object) => `${object.kind}:${object.findings.length}:${object.warnings.length}`),
    ).toEqual(['ConfigMap:0:0', 'Deployment:0:0', 'Service:0:0', 'CronJob:0:0']);
    expect(report).toMatchObject({
      criticalCount: 0,
      warningCount: 0,
      rejectionCount: 0,
      auditedOrWarnedCount: 0,
      unknownCount: 0,
    });
    // Deployment and CronJob both meet the network and mesh rules of shop: listed once.
    expect(report.standing).toHaveLength(1);
    const names = report.standing[0].constraints.map((finding) => finding.name);
    expect(report.standing[0].namespace).toBe('shop');
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining(['block-cloud-metadata', 'default-deny-ingress', 'prod-egress-guardrails']),
    );
    // Severity follows what they do to the object: nothing, so Info, and no warning.
    expect(report.standing[0].constraints.every((finding) => finding.severity === 'Info')).toBe(true);
  });

  it('folds Pod Security enforce, audit and warn failing on the same evidence into one finding', async () => {
    const pod = `apiVersion: v1
kind: Pod
metadata: { name: bad, namespace: checkout }
spec:
  containers:
    - name: c
      image: registry.example.com/x:1.0
      resources: { requests: { cpu: 10m, memory: 16Mi }, limits: { cpu: 10m, memory: 16Mi } }
      securityContext: { privileged: true }
`;
    const report = await checkManifest('pod.yaml', pod, lookup);
    const podSecurity = report.objects[0].findings.filter((finding) =>
      finding.name.startsWith('pod-security/'),
    );
    expect(podSecurity.map((finding) => finding.name)).toEqual(['pod-security/enforce']);
    expect(podSecurity[0].sameCause?.map((same) => same.name).sort()).toEqual([
      'pod-security/audit',
      'pod-security/warn',
    ]);
    // Counted once: the enforce rejection; the same cause's audit and warn are no extra findings.
    expect(report.rejectionCount).toBe(1);
    expect(report.auditedOrWarnedCount).toBe(0);
  });
});
