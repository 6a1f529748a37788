import request from 'supertest';
import {
  demoClusterObjects,
  fixtureControllerApp,
  indexObjects,
} from '../../../test/support/controller-fixtures';

// Hostile and odd requests found by probing the controller (issue 13, items 1 and 4): each must be a
// JSON 4xx, never a crash, and a request that asks for a lower detail level must get it.

const demo = indexObjects(demoClusterObjects());
const app = fixtureControllerApp(demo);

describe('POST /resources with hostile parameters', () => {
  it.each([
    ['an object with a non-callable toString', { toString: 1 }],
    ['an object', { a: 1 }],
    ['an array', ['a']],
    ['a number', 7],
    ['null', null],
  ])('answers 400 JSON when params.name is %s', async (_label, name) => {
    const response = await request(app)
      .post('/resources')
      .send({ resource: 'constraints', params: { namespace: 'shop', name } })
      // A throw in the body callback used to escape express: no answer ever came.
      .timeout(3000)
      .expect(400);
    expect(response.body.error).toMatch(/params\.name/);
  });

  it('answers 400 JSON when params.namespace is an object with a broken toString', async () => {
    const response = await request(app)
      .post('/resources')
      .send({ resource: 'reports', params: { namespace: { toString: 1 } } })
      .expect(400);
    expect(response.body).toEqual({ error: 'params.namespace is required' });
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['no charset but another type', 'application/xml'],
  ])('refuses %s with 415 (sendable cross-site without a preflight)', async (_label, type) => {
    const response = await request(app)
      .post('/resources')
      .set('Content-Type', type)
      .send(JSON.stringify({ resource: 'health' }))
      .expect(415);
    expect(response.body.error).toMatch(/application\/json/);
  });

  it.each(['utf-16', 'UTF-16LE', 'latin1'])('refuses JSON in charset %s with 415', async (charset) => {
    await request(app)
      .post('/resources')
      .set('Content-Type', `application/json; charset=${charset}`)
      .send(JSON.stringify({ resource: 'health' }))
      .expect(415);
  });

  it('accepts application/json with and without charset=utf-8', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
    ])
      await request(app)
        .post('/resources')
        .set('Content-Type', type)
        .send(JSON.stringify({ resource: 'reports', params: { namespace: 'shop' } }))
        .expect(200);
  });
});

describe('lowering the detail level on a controller at full', () => {
  const constraintPath = '/resources/constraints/shop/api-allow-frontend/ingress';

  it.each([
    ['a repeated parameter', '?detail_level=summary&detail_level=summary'],
    ['a repeated parameter with two values', '?detail_level=full&detail_level=summary'],
    ['a bracketed parameter', '?detail_level[]=summary'],
    ['the camelCase spelling', '?detailLevel=summary'],
  ])('honours %s', async (_label, query) => {
    const report = await request(app).get(`/resources/reports/shop${query}`).expect(200);
    expect(report.body.detailLevel).toBe('summary');
    const single = await request(app).get(`${constraintPath}${query}`).expect(200);
    expect(single.body.detail_level).toBe('summary');
  });

  it('honours params.detail_level in POST /resources', async () => {
    const response = await request(app)
      .post('/resources')
      .send({ resource: 'reports', params: { namespace: 'shop', detail_level: 'summary' } })
      .expect(200);
    expect(response.body.detailLevel).toBe('summary');
  });

  it('takes the lowest of the query and the body', async () => {
    const response = await request(app)
      .post('/resources?detail_level=detailed')
      .send({ resource: 'reports', params: { namespace: 'shop', detail_level: 'summary' } })
      .expect(200);
    expect(response.body.detailLevel).toBe('summary');
  });

  it.each([
    ['an unknown value among repeated ones', '?detail_level=summary&detail_level=everything'],
    ['an unknown bracketed value', '?detail_level[]=secret'],
    // An empty value asks for nothing recognisable: it used to mean "the configured level".
    ['an empty value', '?detail_level='],
    ['an empty value beside a valid one', '?detail_level=summary&detail_level='],
  ])('answers 400 for %s', async (_label, query) => {
    const response = await request(app).get(`/resources/reports/shop${query}`).expect(400);
    expect(response.body.error).toMatch(/detail_level must be/);
  });

  it('answers 400 for a detail level in the body that is not a string', async () => {
    await request(app)
      .post('/resources')
      .send({ resource: 'reports', params: { namespace: 'shop', detail_level: ['summary'] } })
      .expect(400);
  });
});

describe('GET /api/v1/constraints with a partial object description', () => {
  it.each([
    ['an empty name without kind', '&name='],
    ['an invalid kind without name', '&kind=-x'],
    ['annotations that are not JSON, without kind and name', '&annotations=%0F'],
  ])('answers 400 for %s (found by schemathesis)', async (_label, query) => {
    await request(app).get(`/api/v1/constraints?namespace=shop${query}`).expect(400);
  });
});
