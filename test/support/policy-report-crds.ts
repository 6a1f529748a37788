// The PolicyReport CRDs (wgpolicyk8s.io/v1alpha2) as the Kubernetes API test server needs them to
// serve the two kinds: names, scope and version. The test server does not validate schemas; the e2e
// tier installs Kyverno's real definitions (test/e2e/policy-report-crds.ts).

function crd(kind: string, plural: string, shortName: string, scope: 'Namespaced' | 'Cluster') {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.wgpolicyk8s.io` },
    spec: {
      group: 'wgpolicyk8s.io',
      scope,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames: [shortName] },
      versions: [
        {
          name: 'v1alpha2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

export const POLICY_REPORT_CRDS = [
  crd('PolicyReport', 'policyreports', 'polr', 'Namespaced'),
  crd('ClusterPolicyReport', 'clusterpolicyreports', 'cpolr', 'Cluster'),
];
