// docs/openapi.yaml itself: a valid OpenAPI 3.1 document, strict schemas that catch drift, and the
// same routes as the app. openapi.test.ts holds the app's real responses to it.
import request from 'supertest';
import type { Report } from '../../../services/model/api';
import { componentName, openApi, pointer, validatorAt } from './openapi-contract';
import { createControllerRoutes } from '../../../services/controller/http/app';
import { app, controllerDependencies } from './openapi-app';

describe('docs/openapi.yaml', () => {
  it('is an OpenAPI 3.1 document whose every schema compiles in strict mode', () => {
    expect(openApi.openapi).toMatch(/^3\.1\./);
    for (const name of Object.keys(openApi.components.schemas))
      expect(() => validatorAt(pointer('components', 'schemas', name))).not.toThrow();
    for (const [template, item] of Object.entries(openApi.paths))
      for (const [method, operation] of Object.entries(item))
        for (const [status, response] of Object.entries(operation?.responses ?? {})) {
          const resolved = response.$ref
            ? openApi.components.responses[componentName(response.$ref, 'responses')]
            : response;
          expect({
            route: `${method} ${template} ${status}`,
            content: Object.keys(resolved?.content ?? {}),
          }).toEqual({
            route: `${method} ${template} ${status}`,
            content: [expect.stringMatching(/^(application\/json|text\/plain)$/)],
          });
        }
  });

  it('documents exactly the routes the app serves, with their methods', () => {
    // Every route is an express route; the fast path only answers some requests of one of them.
    const stack = (
      createControllerRoutes(controllerDependencies()) as unknown as {
        router: { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> };
      }
    ).router.stack;
    const served = stack
      .filter((layer) => layer.route && Object.keys(layer.route.methods).length === 1)
      .map((layer) => {
        const route = layer.route as { path: string; methods: Record<string, boolean> };
        const template = route.path.replace(/\*(\w+)/g, '{$1}').replace(/:(\w+)/g, '{$1}');
        return `${Object.keys(route.methods)[0]} ${template}`;
      })
      .sort();
    const documented = Object.entries(openApi.paths)
      .flatMap(([template, item]) => Object.keys(item).map((method) => `${method} ${template}`))
      .sort();
    expect(served).toEqual(documented);
  });

  it('the validator catches a field added, removed or renamed', async () => {
    const response = await request(app).get('/resources/reports/shop').expect(200);
    const validate = validatorAt(pointer('components', 'schemas', 'Report'));
    expect(validate(response.body)).toBe(true);
    const added = { ...response.body, extra: 1 };
    const { infoCount, ...removed } = response.body as Report;
    const renamed = { ...removed, info_count: infoCount };
    for (const drifted of [added, removed, renamed]) expect(validate(drifted)).toBe(false);
    const entry = (response.body as Report).constraints[0];
    const entryValidator = validatorAt(pointer('components', 'schemas', 'ReportEntry'));
    expect(entryValidator({ ...entry, severity: 'Severe' })).toBe(false);
    expect(entryValidator({ ...entry, effect: 'explode' })).toBe(false);
  });
});
