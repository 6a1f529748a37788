import type { DetailLevel } from '../model/api';
import { isRecord } from '../model/kubernetes';
import type { Viewer } from '../model/text';
import type { Logger } from '../logging/logger';
import { PolicyReportPublisher, type PolicyReportSource } from './risks/policy-report-publisher';
import {
  DEFAULT_POLICY_REPORT_SETTINGS,
  type PolicyReportSettings,
  type PolicyReportStore,
} from './risks/policy-report-store';
import type { ReportedWorkload } from './risks/policy-report';
import type { RiskTracker } from './risks/risk-tracker';
import { renderWorkloadRisk } from './risks/risk-view';
import { KubernetesPolicyReportStore } from './policy-report-kubernetes-store';
import { loadKubeConfig } from './object-source';
import type { ControllerConfig } from './config';

// `--policy-reports` (issue 35): the workloads at risk of one controller, published as PolicyReports
// through a store (the API server's, or a test's). Each namespace's report is rendered as the risks
// resource renders it at the controller's `--detail-level` for a reader of that namespace, with no
// caller's own RBAC: whoever may read PolicyReports there reads it (docs/decisions.md).

/** The risks of a namespace as its report shows them, with each workload's uid. */
export function policyReportSource(
  risks: Pick<RiskTracker, 'risksInNamespace' | 'objectOf' | 'status' | 'countsByNamespace' | 'onRiskChange'>,
  detailLevel: DetailLevel,
): PolicyReportSource {
  return {
    evaluated: () => risks.status().evaluated,
    countsByNamespace: () => risks.countsByNamespace(),
    namespaceView: (namespace) => {
      const viewer: Viewer = { level: detailLevel, namespace };
      const workloads = risks.risksInNamespace(namespace).flatMap((risk): ReportedWorkload[] => {
        const object = risks.objectOf(risk.workload);
        if (!object) return [];
        const uid = isRecord(object.metadata) ? object.metadata.uid : undefined;
        return [
          {
            ...renderWorkloadRisk(risk, object, () => viewer),
            ...(typeof uid === 'string' ? { uid } : {}),
          },
        ];
      });
      return { namespace, detailLevel, workloads };
    },
    onRiskChange: (listener) => risks.onRiskChange(listener),
  };
}

/** The writer, not started yet: `start()` once the risks are evaluated in the background. */
export function createPolicyReports(
  risks: RiskTracker,
  store: PolicyReportStore,
  detailLevel: DetailLevel,
  logger: Logger,
  settings: PolicyReportSettings = DEFAULT_POLICY_REPORT_SETTINGS,
): PolicyReportPublisher {
  const publisher = new PolicyReportPublisher(
    policyReportSource(risks, detailLevel),
    store,
    logger,
    settings,
  );
  publisher.start();
  logger.info(
    { detailLevel },
    'writing the workloads at risk as PolicyReports (--policy-reports): one named forewarn per namespace at risk, and a ClusterPolicyReport forewarn',
  );
  return publisher;
}

/** The PolicyReport writer of `--policy-reports`, not started yet; undefined when the flag is off. */
export function policyReportsIfEnabled(
  config: Pick<ControllerConfig, 'policyReports' | 'kubeconfig' | 'detailLevel'>,
  logger: Logger,
  risks: RiskTracker,
  overrides: { policyReportStore?: PolicyReportStore; policyReportSettings?: PolicyReportSettings },
): PolicyReportPublisher | undefined {
  if (!config.policyReports) return undefined;
  const store =
    overrides.policyReportStore ?? new KubernetesPolicyReportStore(loadKubeConfig(config.kubeconfig));
  return createPolicyReports(risks, store, config.detailLevel, logger, overrides.policyReportSettings);
}
