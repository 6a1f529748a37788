import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from '../model/error-message';
import { isRecord } from '../model/kubernetes';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  POLICY_REPORT_API_VERSION,
  type PolicyReportKind,
  type PolicyReportObject,
} from './risks/policy-report';
import {
  PolicyReportStoreError,
  type PolicyReportAddress,
  type PolicyReportStore,
  type StoredPolicyReport,
} from './risks/policy-report-store';

// The policy-report store on the API server, through the controller's kubeconfig: plain requests
// (as api-transport.ts reads), each with a deadline so a hanging server cannot hold the publisher.
// Needs get, list, create, update and delete on wgpolicyk8s.io policyreports and
// clusterpolicyreports, which the component grants with `policyReports: true` (infra/rbac.ts). The pure
// building and the batching live in risks/ (policy-report.ts, policy-report-publisher.ts).

const REQUEST_TIMEOUT_MS = 30_000;
/** Reports are up to about a megabyte each: small pages keep one answer bounded. */
const LIST_PAGE_SIZE = 50;

const PLURAL: Record<PolicyReportKind, string> = {
  PolicyReport: 'policyreports',
  ClusterPolicyReport: 'clusterpolicyreports',
};

function collectionPath(kind: PolicyReportKind, namespace?: string): string {
  const base = `/apis/${POLICY_REPORT_API_VERSION}`;
  return namespace === undefined
    ? `${base}/${PLURAL[kind]}`
    : `${base}/namespaces/${encodeURIComponent(namespace)}/${PLURAL[kind]}`;
}

function objectPath(address: PolicyReportAddress): string {
  return `${collectionPath(address.kind, address.namespace)}/${encodeURIComponent(address.name)}`;
}

function storedOf(value: unknown, kind: PolicyReportKind): StoredPolicyReport {
  const metadata = isRecord(value) && isRecord(value.metadata) ? value.metadata : undefined;
  if (!isRecord(value) || !metadata || typeof metadata.name !== 'string')
    throw new PolicyReportStoreError(`the API server answered a ${kind} without metadata.name`, 502);
  return {
    report: {
      ...(value as unknown as PolicyReportObject),
      kind,
      results: Array.isArray(value.results) ? (value.results as PolicyReportObject['results']) : [],
    },
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
  };
}

export class KubernetesPolicyReportStore implements PolicyReportStore {
  constructor(private readonly kubeConfig: KubeConfig) {}

  async listManaged(): Promise<StoredPolicyReport[]> {
    const reports: StoredPolicyReport[] = [];
    for (const kind of ['PolicyReport', 'ClusterPolicyReport'] as const) {
      let next: string | undefined = '';
      while (next !== undefined) {
        const query = new URLSearchParams({
          labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
          limit: String(LIST_PAGE_SIZE),
          ...(next === '' ? {} : { continue: next }),
        });
        const page = await this.send('GET', `${collectionPath(kind)}?${query.toString()}`);
        const items = isRecord(page) && Array.isArray(page.items) ? (page.items as unknown[]) : [];
        reports.push(...items.map((item) => storedOf(item, kind)));
        const token = isRecord(page) && isRecord(page.metadata) ? page.metadata.continue : undefined;
        next = typeof token === 'string' && token !== '' ? token : undefined;
      }
    }
    return reports;
  }

  async get(address: PolicyReportAddress): Promise<StoredPolicyReport | undefined> {
    try {
      return storedOf(await this.send('GET', objectPath(address)), address.kind);
    } catch (error) {
      if (error instanceof PolicyReportStoreError && error.status === 404) return undefined;
      throw error;
    }
  }

  async create(report: PolicyReportObject): Promise<StoredPolicyReport> {
    const answer = await this.send('POST', collectionPath(report.kind, report.metadata.namespace), report);
    return storedOf(answer, report.kind);
  }

  async update(report: PolicyReportObject, resourceVersion: string): Promise<StoredPolicyReport> {
    const body = { ...report, metadata: { ...report.metadata, resourceVersion } };
    const address = { kind: report.kind, namespace: report.metadata.namespace, name: report.metadata.name };
    return storedOf(await this.send('PUT', objectPath(address), body), report.kind);
  }

  async remove(address: PolicyReportAddress, resourceVersion: string): Promise<void> {
    await this.send('DELETE', objectPath(address), {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { resourceVersion },
    });
  }

  /** One request; a non-2xx answer becomes a PolicyReportStoreError with the server's message. */
  private async send(method: string, path: string, body?: unknown): Promise<unknown> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new PolicyReportStoreError('the kubeconfig has no current cluster', undefined);
    const url = new URL(cluster.server.replace(/\/$/, '') + path);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const options: https.RequestOptions = {
      method,
      headers: {
        Accept: 'application/json',
        ...(payload === undefined
          ? {}
          : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
      },
    };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const transport = url.protocol === 'http:' ? http : https;
    let answer: { status: number; text: string };
    try {
      answer = await new Promise((resolve, reject) => {
        const request = transport.request(url, {
          ...options,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        request.once('response', (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.once('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.once('error', reject);
        });
        request.once('error', reject);
        request.end(payload);
      });
    } catch (error) {
      throw new PolicyReportStoreError(`${method} ${path} failed: ${errorMessage(error)}`, undefined);
    }
    let parsed: unknown;
    try {
      parsed = answer.text === '' ? undefined : JSON.parse(answer.text);
    } catch {
      parsed = undefined;
    }
    if (answer.status < 200 || answer.status >= 300) {
      const message =
        isRecord(parsed) && typeof parsed.message === 'string' ? parsed.message : `HTTP ${answer.status}`;
      throw new PolicyReportStoreError(`${method} ${path}: ${message}`, answer.status);
    }
    return parsed;
  }
}
