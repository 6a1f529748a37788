import { request as httpsRequest } from 'node:https';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import type { ListedConstraint } from '../../../services/model/api';
import { createLogger, silentLogger, type Logger } from '../../../services/logging/logger';
import type { ServingPair } from '../../../services/webhook/certs/certificate-check';
import { groupOf, type KubernetesObject } from '../../../services/model/kubernetes';
import { pluralOfKind } from '../../../services/model/resources';
import { workloadLabels } from '../../../services/model/workload-kinds';
import { formatLabelsParameter } from '../../../services/model/admission-query';
import { checkOfForwardedReview } from '../../../services/model/forwarded-review';
import type { ConstraintSource } from '../../../services/webhook/controller-client';
import { createWebhookApp, WebhookHttpsServer } from '../../../services/webhook/server';

// Test-only pieces for the webhook integration tests: a stand-in controller serving the
// `GET /api/v1/constraints` contract from fixtures (and failing on demand), a TLS client that
// trusts only the given CA, and AdmissionReview builders shaped like the API server's.

export type ControllerBehaviour =
  'fixtures' | 'hang' | 'status500' | 'garbage' | 'wrong_shape' | 'huge_stream' | 'huge_declared';

/** A fixture constraint and, optionally, what the stand-in requires of the query to list it. */
export interface StandInConstraint {
  constraint: ListedConstraint;
  resource?: string;
  labels?: Record<string, string>;
}

export interface RecordedQuery {
  namespace: string | null;
  resource: string | null;
  labels: string | null;
}

export class StandInController {
  behaviour: ControllerBehaviour = 'fixtures';
  readonly queries: RecordedQuery[] = [];
  /** Bodies of `POST /api/v1/admission-check`, in order. */
  readonly checkBodies: unknown[] = [];
  /** Bytes written by the streaming huge answer before the client gave up. */
  hugeBytesWritten = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly fixtures: Record<string, StandInConstraint[]>) {}

  async start(): Promise<string> {
    const app = express();
    app.get('/api/v1/constraints', (request, response) => {
      const query = {
        namespace: typeof request.query.namespace === 'string' ? request.query.namespace : null,
        resource: typeof request.query.resource === 'string' ? request.query.resource : null,
        labels: typeof request.query.labels === 'string' ? request.query.labels : null,
      };
      this.queries.push(query);
      this.answer(query, response);
    });
    // The admission check carries the object: the stand-in derives the list query from it as the
    // controller does, and records the body so tests can see what was sent.
    // A review forwarded whole is read as the controller reads it (model/forwarded-review.ts).
    app.post('/api/v1/admission-check', express.json({ limit: '2mb' }), (request, response) => {
      this.checkBodies.push(request.body);
      const received = request.body as { object?: KubernetesObject; review?: unknown; view?: unknown };
      const forwarded =
        received.review === undefined ? undefined : checkOfForwardedReview(received.review, received.view);
      if (forwarded && !forwarded.ok) {
        response.status(forwarded.status).json({ error: forwarded.problem });
        return;
      }
      const body = (forwarded?.fields ?? received) as { object?: KubernetesObject };
      const object = body.object ?? {};
      const group = groupOf(object.apiVersion);
      const plural = pluralOfKind(object.kind ?? '');
      const labels = formatLabelsParameter(workloadLabels({ group, kind: object.kind ?? '' }, object));
      const query = {
        namespace: object.metadata?.namespace ?? null,
        resource: group === '' ? plural : `${group}/${plural}`,
        labels,
      };
      this.queries.push(query);
      this.answer(query, response);
    });
    const server = app.listen(0, '127.0.0.1');
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private answer(query: RecordedQuery, response: express.Response): void {
    switch (this.behaviour) {
      case 'hang':
        return; // never answers; stop() cuts the socket
      case 'status500':
        response.status(500).json({ error: 'index exploded' });
        return;
      case 'garbage':
        response.type('application/json').send('{"constraints": [ {"severity": "Critical", ');
        return;
      case 'wrong_shape':
        response.json({ items: [{ severity: 'Critical', summary: 'should never be shown' }] });
        return;
      case 'huge_declared':
        response.setHeader('Content-Type', 'application/json');
        response.setHeader('Content-Length', String(50 * 1024 * 1024));
        response.write('{"constraints":[');
        return; // declares 50 MB and sends almost nothing
      case 'huge_stream':
        this.streamHugeAnswer(response);
        return;
      case 'fixtures': {
        const labels = new Map(
          (query.labels ?? '')
            .split(',')
            .filter(Boolean)
            .map((pair) => pair.split('=') as [string, string]),
        );
        const listed = (this.fixtures[query.namespace ?? ''] ?? []).filter(
          (entry) =>
            (entry.resource === undefined || entry.resource === query.resource) &&
            Object.entries(entry.labels ?? {}).every(([key, value]) => labels.get(key) === value),
        );
        response.json({ constraints: listed.map((entry) => entry.constraint) });
      }
    }
  }

  /** 50 MB of valid-looking JSON, chunked, written only as fast as the client reads. */
  private streamHugeAnswer(response: express.Response): void {
    response.setHeader('Content-Type', 'application/json');
    const filler = `{"severity":"Warning","summary":"${'x'.repeat(1000)}","remediationHint":"h"},`;
    const total = 50 * 1024 * 1024;
    response.write('{"constraints":[');
    const pump = (): void => {
      while (this.hugeBytesWritten < total) {
        this.hugeBytesWritten += filler.length;
        if (!response.write(filler)) {
          response.once('drain', pump);
          return;
        }
      }
      response.end('{"severity":"Info","summary":"end","remediationHint":""}]}');
    };
    response.on('close', () => response.removeAllListeners('drain'));
    pump();
  }
}

export function listedConstraint(
  overrides: Partial<ListedConstraint> & Pick<ListedConstraint, 'name' | 'severity' | 'summary'>,
): ListedConstraint {
  return {
    namespace: 'shop',
    constraintType: 'NetworkIngress',
    effect: 'deny',
    remediationHint: '',
    sourceKind: 'NetworkPolicy',
    sourceApiVersion: 'networking.k8s.io/v1',
    sourceName: overrides.name,
    sourceNamespace: 'shop',
    tags: [],
    detailLevel: 'full',
    ...overrides,
  };
}

export interface TlsResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  elapsedMs: number;
  /** SHA-256 fingerprint of the certificate the server presented. */
  fingerprint: string;
}

export interface TlsRequest {
  port: number;
  /** The only CA trusted (PEM, may hold several). */
  ca: string;
  method?: string;
  path?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

/** One request on a fresh TLS connection (no pooling: each sees the currently served certificate). */
export function tlsRequest(options: TlsRequest): Promise<TlsResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      {
        host: '127.0.0.1',
        port: options.port,
        method: options.method ?? 'POST',
        path: options.path ?? '/validate',
        ca: options.ca,
        agent: false,
        headers: { 'content-type': 'application/json', ...options.headers },
      },
      (response) => {
        const fingerprint = (response.socket as import('node:tls').TLSSocket).getPeerCertificate()
          .fingerprint256;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            elapsedMs: performance.now() - started,
            fingerprint,
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

export interface RunningWebhook {
  server: WebhookHttpsServer;
  port: number;
  close(): Promise<void>;
}

/** The real app on the real HTTPS server, on an ephemeral loopback port. */
export async function startWebhook(options: {
  constraints: ConstraintSource;
  certificate?: ServingPair;
  maxReviewBytes?: number;
  logger?: Logger;
}): Promise<RunningWebhook> {
  const logger = options.logger ?? silentLogger();
  const server: WebhookHttpsServer = new WebhookHttpsServer(
    (request, response) => app(request, response),
    logger,
  );
  const app = createWebhookApp({
    constraints: options.constraints,
    logger,
    isReady: () => server.hasCertificate(),
    maxReviewBytes: options.maxReviewBytes,
  });
  if (options.certificate) server.setCertificate(options.certificate);
  const port = await server.listen({ host: '127.0.0.1', port: 0 });
  return { server, port, close: () => server.close(1000) };
}

/** A debug-level logger whose JSON lines the test can read back. */
export function capturingLogger(): {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
  text: () => string;
} {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw.push(chunk.toString());
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return {
    logger: createLogger({ service: 'webhook', level: 'debug', destination }),
    lines,
    text: () => raw.join(''),
  };
}

export type Operation = 'CREATE' | 'UPDATE';

export interface ReviewTarget {
  group: string;
  version: string;
  kind: string;
  resource: string;
  object: Record<string, unknown>;
}

function withStaleLabels(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withStaleLabels);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, entry]) => [
      key,
      key === 'labels' ? { stale: 'yes' } : withStaleLabels(entry),
    ]),
  );
}

/** An AdmissionReview as kube-apiserver sends it (field order included: uid first in request). */
export function admissionReview(
  target: ReviewTarget,
  operation: Operation,
  uid: string,
  namespace = 'shop',
): string {
  const metadata = (target.object.metadata ?? {}) as Record<string, unknown>;
  const apiVersion = target.group ? `${target.group}/${target.version}` : target.version;
  const object = { apiVersion, kind: target.kind, ...target.object, metadata: { ...metadata, namespace } };
  return JSON.stringify({
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid,
      kind: { group: target.group, version: target.version, kind: target.kind },
      resource: { group: target.group, version: target.version, resource: target.resource },
      requestKind: { group: target.group, version: target.version, kind: target.kind },
      requestResource: { group: target.group, version: target.version, resource: target.resource },
      name: metadata.name,
      namespace,
      operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object,
      // The previous version had other labels everywhere: a webhook reading oldObject would notice.
      oldObject: operation === 'UPDATE' ? withStaleLabels(object) : null,
      dryRun: false,
      options: {
        apiVersion: 'meta.k8s.io/v1',
        kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions',
      },
    },
  });
}
