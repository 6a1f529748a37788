import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Agent } from 'undici';
import { silentLogger } from '../../services/logging/logger';
import {
  buildAdmissionResponse,
  parseAdmissionReview,
  parseAdmissionReviewText,
  uidFromReviewPrefix,
  type ParsedReview,
} from '../../services/webhook/admission';
import {
  buildWarnings,
  MAX_WARNING_LENGTH,
  shortenWarning,
  type WarningSource,
} from '../../services/model/warnings';
import {
  createControllerClient,
  parseConstraintList,
  type ControllerClient,
} from '../../services/webhook/controller-client';
import { createWebhookApp } from '../../services/webhook/server';
import { pathsOf, replaceAt } from '../support/mutate-object';

// Property-based AdmissionReviews (rule B-1): the webhook's pure parse and build functions never
// throw and never produce anything but an allowed answer, whatever the review holds; and the real
// HTTP handler, querying a controller through the real client while that controller answers
// random bodies and statuses, answers every request 200 with `allowed: true`, the uid it could
// read, and warnings within the API server's limits.

const VALID_REVIEW = {
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    name: 'web',
    namespace: 'shop',
    operation: 'CREATE',
    userInfo: { username: 'developer', groups: ['system:authenticated'] },
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web', tier: 'frontend' } }, spec: { containers: [] } },
      },
    },
    oldObject: null,
  },
};
const REVIEW_PATHS = pathsOf(VALID_REVIEW);

const anyValue = fc.oneof(
  fc.anything({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', 'admission.k8s.io/v1beta1', 'AdmissionReview', 'kube-system', '\u0000', '../..'),
);

/** A valid review with any one field (the whole body included) replaced by anything. */
const mutatedReview = fc
  .tuple(fc.constantFrom(...REVIEW_PATHS), anyValue)
  .map(([at, replacement]) => replaceAt(VALID_REVIEW, at, replacement) as unknown);

const reviewText = fc.oneof(
  { weight: 2, arbitrary: fc.constant(JSON.stringify(VALID_REVIEW)) },
  { weight: 3, arbitrary: mutatedReview.map((review) => JSON.stringify(review) ?? '') },
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.json({ maxDepth: 4 }),
  mutatedReview.map((review) => (JSON.stringify(review) ?? '').slice(0, 150)),
);

const warningText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', minLength: 200, maxLength: 400 }),
  fc.constantFrom('', ' ', '\n\t\r', 'NetworkPolicy "a" denies all ingress traffic', '\u0085\u2028x'),
);

const warningSources: fc.Arbitrary<WarningSource[]> = fc.array(
  fc.record({
    severity: fc.constantFrom('Critical' as const, 'Warning' as const, 'Info' as const),
    summary: warningText,
    remediationHint: warningText,
  }),
  { maxLength: 12 },
);

function codePoints(text: string): number {
  return Array.from(text).length;
}

function expectUsableWarnings(warnings: readonly string[]): void {
  for (const warning of warnings) {
    expect(codePoints(warning)).toBeLessThanOrEqual(MAX_WARNING_LENGTH);
    expect(warning).toMatch(/^\[(CRITICAL|WARNING)\] /);
    // A control character would break the HTTP Warning header the API server puts it in.
    expect(/\p{Cc}/u.test(warning)).toBe(false);
  }
}

function expectSaneParse(parsed: ParsedReview): void {
  if (!parsed.ok) {
    expect(typeof parsed.uid).toBe('string');
    return;
  }
  expect(parsed.request.uid).not.toBe('');
  expect(typeof parsed.request.namespace).toBe('string');
  expect(parsed.request.namespace).not.toBe('');
  for (const value of Object.values(parsed.request.labels ?? {})) expect(typeof value).toBe('string');
}

/** The definition shortenWarning's in-place counting must match: code points, then `…`. */
function referenceShorten(text: string, max: number): string {
  const codePoints = Array.from(text);
  if (codePoints.length <= max) return text;
  return `${codePoints
    .slice(0, max - 1)
    .join('')
    .trimEnd()}…`;
}

describe('admission pure functions on random input', () => {
  it('shorten warnings exactly by code points, surrogate pairs and lone surrogates included', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 40 }),
          fc.string({ unit: 'grapheme', maxLength: 40 }),
          fc.string({ unit: fc.constantFrom('a', ' ', '\u{1F600}', '\uD800', '\uDC00'), maxLength: 40 }),
        ),
        fc.integer({ min: 1, max: 30 }),
        (text, max) => expect(shortenWarning(text, max)).toBe(referenceShorten(text, max)),
      ),
      { numRuns: 5_000 },
    );
  });

  it('parse any value or text without throwing', () => {
    fc.assert(
      fc.property(fc.oneof(mutatedReview, fc.anything({ maxDepth: 4 })), (body) =>
        expectSaneParse(parseAdmissionReview(body)),
      ),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(reviewText, (text) => {
        expectSaneParse(parseAdmissionReviewText(text));
        expect(typeof uidFromReviewPrefix(text)).toBe('string');
      }),
      { numRuns: 2_000 },
    );
  });

  it('read any controller answer as a list or a failure, never an exception', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything({ maxDepth: 4 }),
          fc.record({ constraints: fc.array(fc.anything({ maxDepth: 2 })) }),
        ),
        (body) => {
          const parsed = parseConstraintList(body);
          if (parsed.ok) expectUsableWarnings(buildWarnings(parsed.constraints));
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('build only allowed answers with warnings the API server accepts, Critical first', () => {
    fc.assert(
      fc.property(warningSources, fc.string(), (sources, uid) => {
        const warnings = buildWarnings(sources);
        expectUsableWarnings(warnings);
        const firstWarning = warnings.findIndex((warning) => warning.startsWith('[WARNING]'));
        if (firstWarning !== -1)
          expect(warnings.slice(firstWarning).some((warning) => warning.startsWith('[CRITICAL]'))).toBe(
            false,
          );
        expect(warnings.length).toBeLessThanOrEqual(
          sources.filter((source) => source.severity !== 'Info').length,
        );
        const answer = buildAdmissionResponse(uid, warnings);
        expect(answer.response).toEqual({ uid, allowed: true, warnings });
      }),
      { numRuns: 2_000 },
    );
  });
});

/** A controller whose next answer the property chooses. */
interface ControllerAnswer {
  status: number;
  contentType: string;
  body: string;
}

const controllerAnswer: fc.Arbitrary<ControllerAnswer> = fc.record({
  status: fc.constantFrom(200, 200, 200, 200, 200, 204, 404, 500, 503),
  contentType: fc.constantFrom('application/json', 'text/html', ''),
  body: fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .array(
          fc.record({
            name: fc.oneof(fc.string(), anyValue),
            severity: fc.oneof(
              { weight: 4, arbitrary: fc.constantFrom('Critical', 'Warning', 'Info') },
              anyValue,
            ),
            summary: fc.oneof({ weight: 4, arbitrary: warningText }, anyValue),
            remediationHint: fc.oneof(warningText, anyValue),
          }),
          { maxLength: 8 },
        )
        .map((constraints) => JSON.stringify({ constraints })),
    },
    fc.json({ maxDepth: 3 }),
    fc.string({ unit: 'binary', maxLength: 100 }),
  ),
});

describe('the real HTTP handler with a controller answering at random', () => {
  let controllerServer: Server;
  let webhookServer: Server;
  let controllerClient: ControllerClient;
  let client: Agent;
  let nextAnswer: ControllerAnswer = {
    status: 200,
    contentType: 'application/json',
    body: '{"constraints":[]}',
  };
  let webhookOrigin: string;

  beforeAll(async () => {
    controllerServer = createServer((request, response) => {
      request.resume();
      const headers: Record<string, string> = nextAnswer.contentType
        ? { 'content-type': nextAnswer.contentType }
        : {};
      response.writeHead(nextAnswer.status, headers);
      response.end(nextAnswer.status === 204 ? undefined : nextAnswer.body);
    });
    await new Promise<void>((resolve) => controllerServer.listen(0, '127.0.0.1', () => resolve()));
    controllerClient = createControllerClient({
      baseUrl: `http://127.0.0.1:${(controllerServer.address() as AddressInfo).port}`,
    });
    // The admission handler is the app; TLS is the server's concern and is covered elsewhere.
    const app = createWebhookApp({
      constraints: controllerClient,
      logger: silentLogger(),
      isReady: () => true,
    });
    webhookServer = createServer(app);
    await new Promise<void>((resolve) => webhookServer.listen(0, '127.0.0.1', () => resolve()));
    webhookOrigin = `http://127.0.0.1:${(webhookServer.address() as AddressInfo).port}`;
    client = new Agent({ connections: 4 });
  });

  afterAll(async () => {
    await client.close();
    await controllerClient.close();
    await new Promise((resolve) => webhookServer.close(resolve));
    await new Promise((resolve) => controllerServer.close(resolve));
  });

  it('answers every request 200, allowed, with the readable uid and valid warnings', async () => {
    let answersWithWarnings = 0;
    await fc.assert(
      fc.asyncProperty(
        reviewText,
        controllerAnswer,
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', ''),
        fc.constantFrom('/validate', '/', '/validate/extra'),
        async (text, answer, contentType, path) => {
          nextAnswer = answer;
          const response = await client.request({
            origin: webhookOrigin,
            path,
            method: 'POST',
            headers: contentType ? { 'content-type': contentType } : {},
            body: text,
          });
          expect(response.statusCode).toBe(200);
          const review = (await response.body.json()) as {
            kind: unknown;
            response: { uid: unknown; allowed: unknown; warnings: unknown };
          };
          expect(review.kind).toBe('AdmissionReview');
          expect(review.response.allowed).toBe(true);
          const parsed = parseAdmissionReviewText(text);
          expect(review.response.uid).toBe(parsed.ok ? parsed.request.uid : parsed.uid);
          expect(Array.isArray(review.response.warnings)).toBe(true);
          expectUsableWarnings(review.response.warnings as string[]);
          if ((review.response.warnings as string[]).length > 0) answersWithWarnings++;
        },
      ),
      { numRuns: 400 },
    );
    // The runs reached the warning path too, not only the fail-open ones.
    expect(answersWithWarnings).toBeGreaterThan(10);
  }, 60_000);
});
