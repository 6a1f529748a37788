import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Writable } from 'node:stream';
import { createLogger, silentLogger } from '../../logging/logger';
import {
  FIXED_NOW,
  indexObjects,
  SHOP_DENY_ALL,
  SHOP_DEPLOYMENT,
  runtimeStateFor,
  syncedSource,
} from '../../../test/support/controller-fixtures';
import { createControllerMetrics } from '../metrics';
import { createControllerApp, createControllerRoutes, type ControllerAppDependencies } from './app';
import { admissionCheckFastPath } from './admission-check-fast-path';
import { ADMISSION_CHECK_BODY_LIMIT_BYTES } from './admission-check-route';

const deployment = SHOP_DEPLOYMENT;
const denyAll = SHOP_DENY_ALL;

interface RawAnswer {
  status: number;
  body: string;
}

/** One request written by hand, so chunked bodies and odd headers reach the server as given. */
function send(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string>; chunks?: string[] },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'POST',
        path: options.path ?? '/api/v1/admission-check',
        headers: options.headers,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    outgoing.on('error', reject);
    for (const chunk of options.chunks ?? []) outgoing.write(chunk);
    outgoing.end();
  });
}

describe('admission-check fast path: which requests it takes', () => {
  let server: Server;
  let port: number;
  const answered: Array<{ text: unknown; level: string }> = [];

  beforeAll(async () => {
    const fastPath = admissionCheckFastPath({
      answerer: (text, level) => {
        answered.push({ text, level });
        return { status: 200, json: '{"taken":true}' };
      },
      logger: silentLogger(),
    });
    server = createServer((incoming, outgoing) => {
      if (!fastPath(incoming, outgoing)) outgoing.end('express');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const body = JSON.stringify({ object: deployment });
  const sized = (headers: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    ...headers,
  });

  it("answers the webhook's request (exact path, declared length, UTF-8) and reads the body whole", async () => {
    expect(await send(port, { headers: sized(), chunks: [body] })).toEqual({
      status: 200,
      body: '{"taken":true}',
    });
    const utf8 = sized({ 'content-type': 'application/json; charset=UTF-8' });
    expect((await send(port, { headers: utf8, chunks: [body] })).body).toBe('{"taken":true}');
    expect(answered.at(-1)).toEqual({ text: body, level: 'full' });
  });

  it('leaves every other request to express, which answers it as before', async () => {
    type RequestOptions = Parameters<typeof send>[1];
    const cases: RequestOptions[] = [
      { method: 'GET', headers: {} },
      { path: '/api/v1/admission-check?x=1', headers: sized(), chunks: [body] },
      { path: '/api/v1/admission-check/', headers: sized(), chunks: [body] },
      { path: '/API/v1/admission-check', headers: sized(), chunks: [body] },
      { headers: { 'content-type': 'application/json' }, chunks: [body.slice(0, 10), body.slice(10)] },
      { headers: sized({ 'content-encoding': 'gzip' }), chunks: [body] },
      { headers: sized({ 'content-type': 'text/plain; charset=latin1' }), chunks: [body] },
      { headers: { 'content-length': String(ADMISSION_CHECK_BODY_LIMIT_BYTES + 1) }, chunks: [] },
    ];
    const before = answered.length;
    for (const options of cases) {
      const answer = await send(port, options).catch(() => ({ status: 0, body: 'express' }));
      expect(answer.body).toBe('express');
    }
    expect(answered.length).toBe(before);
  });
});

describe('admission-check fast path: the same answers as the express route', () => {
  const cluster = indexObjects([denyAll]);
  let synced = true;
  const metrics = createControllerMetrics(
    cluster.index,
    () => runtimeStateFor(cluster, syncedSource({ synced })),
    { processMetrics: false },
  );
  const dependencies: ControllerAppDependencies = {
    index: cluster.index,
    runtimeState: () => runtimeStateFor(cluster, syncedSource({ synced })),
    configuredDetailLevel: 'summary',
    clock: () => FIXED_NOW,
    logger: silentLogger(),
    requestObserver: metrics.requestObserver,
    metricsHandler: metrics.handler,
  };
  const app = createControllerApp(dependencies);
  const expressOnly = createControllerRoutes(dependencies);

  it('gives the same status, headers and body for answers and for errors', async () => {
    const bodies = [
      JSON.stringify({ object: deployment }),
      JSON.stringify({ object: deployment, operation: 'UPDATE', oldObject: deployment }),
      JSON.stringify({ object: deployment, userInfo: { username: 'alice', groups: ['devs'] } }),
      JSON.stringify({ object: deployment, userInfo: { groups: ['devs'] } }),
      JSON.stringify({ object: deployment, userInfo: { username: 'alice', groups: 'devs' } }),
      '{"object": ',
      JSON.stringify({ operation: 'CREATE' }),
      JSON.stringify({ object: { ...deployment, metadata: { namespace: 'Not A Namespace' } } }),
      '',
    ];
    for (const state of [true, false]) {
      synced = state;
      for (const text of bodies) {
        const post = (target: typeof app) =>
          request(target).post('/api/v1/admission-check').set('Content-Type', 'application/json').send(text);
        const [fast, slow] = [await post(app), await post(expressOnly)];
        expect({ status: fast.status, body: fast.text }).toEqual({ status: slow.status, body: slow.text });
        expect(fast.headers['content-type']).toBe(slow.headers['content-type']);
        expect(fast.headers['x-content-type-options']).toBe('nosniff');
      }
    }
    synced = true;
    const badRequester = await request(app)
      .post('/api/v1/admission-check')
      .send({ object: deployment, userInfo: { username: 'alice', groups: 'devs' } })
      .expect(400);
    expect(badRequester.body).toEqual({ error: 'userInfo.groups must be a list of strings' });
    // The contract's types hold for every field (schemathesis found a null list and an object flag).
    for (const [body, message] of [
      [
        { object: deployment, userInfo: { username: 'alice', groups: null } },
        'userInfo.groups must be a list of strings',
      ],
      [{ object: deployment, mayExist: {} }, 'mayExist must be true or false'],
    ] as const)
      expect((await request(app).post('/api/v1/admission-check').send(body).expect(400)).body).toEqual({
        error: message,
      });
    const answer = await request(app)
      .post('/api/v1/admission-check')
      .send({ object: deployment })
      .expect(200);
    expect(
      (answer.body as { constraints: Array<{ name: string }> }).constraints.map((entry) => entry.name),
    ).toContain('default-deny');
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['text/plain with UTF-8', 'text/plain; charset=utf-8'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['another JSON-looking type', 'application/json-patch+json'],
    ['JSON in latin1', 'application/json; charset=latin1'],
    ['no content type', undefined],
  ])('refuses %s with the same 415 on both paths, before asking who the caller is', async (_label, type) => {
    const levelsAsked: string[] = [];
    const access = {
      levelFor: () => {
        levelsAsked.push('asked');
        return Promise.resolve('summary' as const);
      },
    };
    const guarded = { ...dependencies, apiAccess: access };
    const body = JSON.stringify({ object: deployment });
    const answers: RawAnswer[] = [];
    for (const target of [createControllerApp(guarded), createControllerRoutes(guarded)]) {
      const server = createServer(target);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const headers: Record<string, string> = { 'content-length': String(Buffer.byteLength(body)) };
      if (type !== undefined) headers['content-type'] = type;
      try {
        answers.push(await send((server.address() as AddressInfo).port, { headers, chunks: [body] }));
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
    expect(answers[0]?.status).toBe(415);
    expect(JSON.parse(answers[0]?.body ?? '')).toEqual({ error: expect.stringMatching(/json/i) });
    expect(answers[1]).toEqual(answers[0]);
    expect(levelsAsked).toEqual([]);
  });

  it('counts its answers in the request metrics under the route template', async () => {
    await request(app).post('/api/v1/admission-check').send({ object: deployment }).expect(200);
    const text = (await request(app).get('/metrics').expect(200)).text;
    expect(text).toMatch(
      /forewarn_http_requests_total\{route="\/api\/v1\/admission-check",method="POST",status="200"\} [1-9]/,
    );
  });

  it('answers 500 JSON and logs when answering throws, and keeps serving', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const fastPath = admissionCheckFastPath({
      answerer: () => {
        throw new Error('broken answerer');
      },
      logger: createLogger({ service: 'controller', level: 'error', destination }),
    });
    const server = createServer((incoming, outgoing) => {
      if (!fastPath(incoming, outgoing)) outgoing.writeHead(404).end();
    });
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await request(server).post('/api/v1/admission-check').send({ object: deployment });
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ error: 'internal error; see the controller log' });
    }
    expect(lines.join('')).toContain('broken answerer');
  });
});
