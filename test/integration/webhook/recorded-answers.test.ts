import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController, type RunningController } from '../../../services/controller/runtime';
import { silentLogger } from '../../../services/logging/logger';
import { constraintQueryOf, parseAdmissionReviewText } from '../../../services/model/admission-review';
import { ADMISSION_CHECK_PATH, ADMISSION_CHECKS_PATH } from '../../../services/model/admission-query';
import { forwardedReviewOf } from '../../../services/model/forwarded-review';
import {
  generateSelfSignedBundle,
  type CertificateBundle,
} from '../../../services/webhook/certs/self-signed';
import type { ControllerClient } from '../../../services/webhook/controller-client';
import { createControllerSource } from '../../../services/webhook/controller-source';
import { recordedReviewCases, type RecordedReviewCase } from '../../support/recorded-admission-reviews';
import { startWebhook, tlsRequest, type RunningWebhook } from './harness';

// Every answer byte-identical to the recorded ones (issue 33): the admission path was cut for CPU
// (the webhook's controller client, the controller's fast path, the evaluators' hot loops), and none
// of it may change a warning, their order, or a byte of what the API server or `forewarn check`
// reads. The fixture holds what the code answered when it was recorded, for the reviews of
// test/support/recorded-admission-reviews.ts (the examples' objects and the team's real-world
// workloads, admitted into each namespace of the demo cluster, plus malformed reviews):
// - the webhook's answer to the API server (status, content type, body);
// - the controller's answer to the admission check the webhook sends (`view: warnings`), and to the
//   full check `forewarn check --url` asks for, for the CREATE reviews in `shop`.
// Regenerate (only when an answer is meant to change, and say why in the commit):
//   FOREWARN_UPDATE_ADMISSION_ANSWERS=1 npx jest test/integration/webhook/recorded-answers.test.ts

const FIXTURE = path.join(__dirname, '../../fixtures/admission-answers.json');
const UPDATE = process.env.FOREWARN_UPDATE_ADMISSION_ANSWERS === '1';

interface RecordedAnswer {
  webhook: { status: number; contentType: string; body: string };
  /** The controller's answers to the check body the webhook built; absent for reviews it asks nothing of. */
  check?: { status: number; body: string };
  fullCheck?: { status: number; body: string };
}

let directory: string;
let controller: RunningController;
let client: ControllerClient;
let webhook: RunningWebhook;
let bundle: CertificateBundle;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'forewarn-recorded-'));
  cpSync(path.join(__dirname, '../../../examples/manifests'), directory, { recursive: true });
  const config = parseControllerConfig(
    [
      '--manifests',
      directory,
      '--port',
      '0',
      '--address',
      '127.0.0.1',
      '--mcp=false',
      '--detail-level',
      'full',
    ],
    {},
  );
  controller = await startController(config, silentLogger());
  bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  // Wired as services/webhook/main.ts wires it.
  client = createControllerSource({ baseUrl: `http://127.0.0.1:${controller.port}` });
  webhook = await startWebhook({ constraints: client, certificate: bundle });
}, 60_000);

afterAll(async () => {
  await webhook?.close();
  await client?.close();
  await controller?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

async function askController(body: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${controller.port}${ADMISSION_CHECK_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, body: await response.text() };
}

async function answersTo(reviewCase: RecordedReviewCase): Promise<RecordedAnswer> {
  const response = await tlsRequest({
    port: webhook.port,
    ca: bundle.caPem,
    body: reviewCase.review,
    headers: { 'content-type': 'application/json' },
  });
  const answer: RecordedAnswer = {
    webhook: {
      status: response.status,
      contentType: String(response.headers['content-type']),
      body: response.text,
    },
  };
  const parsed = parseAdmissionReviewText(reviewCase.review);
  if (!parsed.ok) return answer;
  const checkBody = constraintQueryOf(parsed.request, 'warnings').checkBody;
  if (checkBody !== undefined) answer.check = await askController(checkBody);
  const fullBody = constraintQueryOf(parsed.request).checkBody;
  if (fullBody !== undefined && parsed.request.operation === 'CREATE' && parsed.request.namespace === 'shop')
    answer.fullCheck = await askController(fullBody);
  return answer;
}

/** The same review with `apiVersion` written before `kind`: not the API server's order, so never forwarded. */
function reordered(review: string): string {
  return review.replace(
    /^\{"kind":"AdmissionReview","apiVersion":"([^"]*)",/,
    '{"apiVersion":"$1","kind":"AdmissionReview",',
  );
}

describe('reviews forwarded whole to the controller (issue 33)', () => {
  it("are answered as the webhook's own check bodies, and the webhook answers as when it reads them itself", async () => {
    let forwardedChecks = 0;
    for (const reviewCase of recordedReviewCases()) {
      const forwarded = forwardedReviewOf(reviewCase.review, 'warnings');
      if (!forwarded) continue;
      const parsed = parseAdmissionReviewText(reviewCase.review);
      const checkBody = parsed.ok ? constraintQueryOf(parsed.request, 'warnings').checkBody : undefined;
      const answer = await askController(forwarded.checkBody);
      if (checkBody === undefined) {
        // Nothing to check (a DELETE, no kind, unreadable): declined, and the webhook reads it itself.
        expect({ [reviewCase.id]: [400, 422].includes(answer.status) }).toEqual({ [reviewCase.id]: true });
      } else {
        forwardedChecks += 1;
        expect({ [reviewCase.id]: answer }).toEqual({ [reviewCase.id]: await askController(checkBody) });
      }
      const send = (body: string) =>
        tlsRequest({
          port: webhook.port,
          ca: bundle.caPem,
          body,
          headers: { 'content-type': 'application/json' },
        });
      const [direct, readByWebhook] = [
        await send(reviewCase.review),
        await send(reordered(reviewCase.review)),
      ];
      expect(forwardedReviewOf(reordered(reviewCase.review), 'warnings')).toBeUndefined();
      expect({ [reviewCase.id]: direct.text }).toEqual({ [reviewCase.id]: readByWebhook.text });
    }
    expect(forwardedChecks).toBeGreaterThan(100);
  }, 120_000);
});

describe('answers to recorded AdmissionReviews', () => {
  it('are byte-identical to the recorded ones, for the webhook and for the controller', async () => {
    const cases = recordedReviewCases();
    const answers: Record<string, RecordedAnswer> = {};
    for (const reviewCase of cases) answers[reviewCase.id] = await answersTo(reviewCase);
    if (UPDATE) {
      const previous: Record<string, RecordedAnswer> = existsSync(FIXTURE)
        ? (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, RecordedAnswer>)
        : {};
      // Cases of a corpus missing here (the real-world workloads) keep their recorded answers.
      writeFileSync(FIXTURE, `${JSON.stringify({ ...previous, ...answers }, null, 1)}\n`);
    }
    const recorded = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, RecordedAnswer>;
    // Every case has a recording (a new case needs the fixture regenerated), and answers alike.
    expect(
      cases.filter((reviewCase) => recorded[reviewCase.id] === undefined).map((each) => each.id),
    ).toEqual([]);
    for (const reviewCase of cases)
      expect({ [reviewCase.id]: answers[reviewCase.id] }).toEqual({
        [reviewCase.id]: recorded[reviewCase.id],
      });
    // The recording is not trivial: it holds warned reviews, clean ones and malformed ones.
    const warned = Object.values(recorded).filter((answer) => answer.webhook.body.includes('"warnings":["'));
    expect(warned.length).toBeGreaterThan(20);
    expect(Object.values(recorded).filter((answer) => answer.check === undefined).length).toBeGreaterThan(5);
  }, 120_000);
});

describe('checks sent together (issue 33, webhook/check-batching.ts)', () => {
  const recorded = () => JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, RecordedAnswer>;

  it("answer each check of a batch as the controller's single route answered it, byte for byte", async () => {
    const checks = recordedReviewCases().flatMap((reviewCase) => {
      const parsed = parseAdmissionReviewText(reviewCase.review);
      const checkBody = parsed.ok ? constraintQueryOf(parsed.request, 'warnings').checkBody : undefined;
      return checkBody === undefined ? [] : [{ id: reviewCase.id, checkBody }];
    });
    expect(checks.length).toBeGreaterThan(100);
    const answers: Record<string, { status: number; body: string }> = {};
    for (let start = 0; start < checks.length; start += 16) {
      const batch = checks.slice(start, start + 16);
      const response = await fetch(`http://127.0.0.1:${controller.port}${ADMISSION_CHECKS_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: batch.map((each) => each.checkBody).join('\n'),
      });
      expect(response.status).toBe(200);
      const entries = ((await response.json()) as { answers: Array<{ status: number; body: unknown }> })
        .answers;
      batch.forEach((each, index) => {
        answers[each.id] = { status: entries[index].status, body: JSON.stringify(entries[index].body) };
      });
    }
    const expected = recorded();
    for (const each of checks)
      expect({ [each.id]: answers[each.id] }).toEqual({ [each.id]: expected[each.id].check });
  }, 120_000);

  it("leave the webhook's answers byte-identical when the API server sends reviews sixteen at a time", async () => {
    const batchesBefore = await batchRequestsCounted();
    const cases = recordedReviewCases();
    const texts: Record<string, string> = {};
    for (let start = 0; start < cases.length; start += 16) {
      const group = cases.slice(start, start + 16);
      const responses = await Promise.all(
        group.map((reviewCase) =>
          tlsRequest({
            port: webhook.port,
            ca: bundle.caPem,
            body: reviewCase.review,
            headers: { 'content-type': 'application/json' },
          }),
        ),
      );
      group.forEach((reviewCase, index) => (texts[reviewCase.id] = responses[index].text));
    }
    const expected = recorded();
    for (const reviewCase of cases)
      expect({ [reviewCase.id]: texts[reviewCase.id] }).toEqual({
        [reviewCase.id]: expected[reviewCase.id].webhook.body,
      });
    // The reviews did go to the controller together.
    expect(await batchRequestsCounted()).toBeGreaterThan(batchesBefore);
  }, 120_000);
});

/** How many batch requests the controller answered 200, from its request metrics. */
async function batchRequestsCounted(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${controller.port}/metrics`)).text();
  const match =
    /forewarn_http_requests_total\{route="\/api\/v1\/admission-checks",method="POST",status="200"\} (\d+)/.exec(
      text,
    );
  return match ? Number(match[1]) : 0;
}
