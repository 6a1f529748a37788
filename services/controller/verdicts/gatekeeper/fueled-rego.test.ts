import { opaBinary } from '../../../../test/support/opa-binary';
import { MAX_YAML_INPUT_CHARACTERS } from './bounded-host-builtins';
import { RegoEngine } from './rego-engine';
import { REGO_TEMPLATE_FUEL } from './rego-template';

// Rego on the event loop (fueled-rego.ts): real opa modules, metered, evaluated with a budget. A
// template that loops stops at its fuel, and the same template answers right on the next object; a
// deep nesting ends in an error, not a crash; the host built-ins are bounded (RE2 for regex.split,
// YAML and sprintf sizes).

const engine = new RegoEngine(opaBinary());
const encoder = new TextEncoder();

function input(object: unknown, parameters: unknown = {}): Uint8Array[] {
  return [
    encoder.encode(`{"review":${JSON.stringify({ object })}`),
    encoder.encode(`,"parameters":${JSON.stringify(parameters)}}`),
  ];
}

async function compiled(name: string, body: string): Promise<string> {
  const code = { rego: `package ${name}\n${body}\n`, libs: [] };
  engine.policyFor(code);
  await engine.settled();
  const ready = engine.policyFor(code);
  if (ready.state !== 'ready') throw new Error(JSON.stringify(ready));
  return ready.policy;
}

describe('Rego on the event loop, bounded by fuel', () => {
  jest.setTimeout(120_000);

  it('stops a loop at its budget, and the template answers right on the next object', async () => {
    const policy = await compiled(
      'loopsonbig',
      `violation[{"msg": msg}] {
  n := input.review.object.n
  count([1 | numbers.range(1, n)[_]; numbers.range(1, n)[_]]) > 3
  msg := sprintf("n is %v", [n])
}`,
    );
    const made = engine.evaluator.instantiations;
    const stopped = engine.evaluator.evaluate(policy, input({ n: 100_000 }), REGO_TEMPLATE_FUEL);
    expect(stopped).toEqual({ reply: 'spent', used: REGO_TEMPLATE_FUEL });
    const small = engine.evaluator.evaluate(policy, input({ n: 2 }), REGO_TEMPLATE_FUEL);
    expect(small.reply).toEqual({ messages: ['n is 2'] });
    expect(small.used).toBeGreaterThan(0);
    expect(small.used).toBeLessThan(REGO_TEMPLATE_FUEL / 20);
    // The instance that trapped was made again; the same stop is the same for the same input.
    expect(engine.evaluator.instantiations).toBeGreaterThan(made);
    expect(engine.evaluator.evaluate(policy, input({ n: 100_000 }), REGO_TEMPLATE_FUEL).reply).toBe('spent');
    expect(engine.evaluator.evaluate(policy, input({ n: 1 }), REGO_TEMPLATE_FUEL).reply).toEqual({
      messages: [],
    });
  });

  it('ends a nesting deeper than the stack in an answer, not a crash', async () => {
    const policy = await compiled(
      'walksdeep',
      'violation[{"msg": "deep"}] { walk(input.review.object, [p, v]); count(p) > 100000 }',
    );
    const depth = 200_000;
    const deep = encoder.encode(`{"review":{"object":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    const { reply } = engine.evaluator.evaluate(
      policy,
      [deep, encoder.encode(',"parameters":{}}')],
      REGO_TEMPLATE_FUEL,
    );
    expect(reply === 'spent' || (typeof reply === 'object' && 'error' in reply)).toBe(true);
    expect(engine.evaluator.evaluate(policy, input({ a: 1 }), REGO_TEMPLATE_FUEL).reply).toEqual({
      messages: [],
    });
  });

  it('bounds the host built-ins: RE2 for regex.split, YAML and sprintf sizes', async () => {
    const split = await compiled(
      'splits',
      'violation[{"msg": msg}] { parts := regex.split(input.parameters.pattern, input.review.object.text); msg := sprintf("%v", [count(parts)]) }',
    );
    // Catastrophic for a backtracking RegExp; linear for RE2.
    const started = performance.now();
    const text = `${'a'.repeat(40)}c`;
    expect(
      engine.evaluator.evaluate(split, input({ text }, { pattern: '(a+)+b' }), REGO_TEMPLATE_FUEL).reply,
    ).toEqual({
      messages: ['1'],
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    const yaml = await compiled(
      'yamls',
      'violation[{"msg": "parsed"}] { yaml.unmarshal(input.review.object.text) }',
    );
    expect(engine.evaluator.evaluate(yaml, input({ text: 'a: 1' }), REGO_TEMPLATE_FUEL).reply).toEqual({
      messages: ['parsed'],
    });
    const tooLarge = engine.evaluator.evaluate(
      yaml,
      input({ text: `a: ${'x'.repeat(MAX_YAML_INPUT_CHARACTERS)}` }),
      REGO_TEMPLATE_FUEL,
    );
    expect(tooLarge.reply).toEqual({
      error: expect.stringMatching(/yaml.unmarshal: its arguments are larger than/),
    });
    const widths = await compiled(
      'widths',
      `violation[{"msg": msg}] { msg := sprintf(concat("", ["%999999v" | numbers.range(1, 10)[_]]), [x | x := numbers.range(1, 10)[_]]) }`,
    );
    expect(engine.evaluator.evaluate(widths, input({}), REGO_TEMPLATE_FUEL).reply).toEqual({
      error: expect.stringMatching(/sprintf: the message would be longer than/),
    });
    // Host work is charged: many calls spend the budget.
    const many = await compiled(
      'manysplits',
      'violation[{"msg": "x"}] { count([regex.split(",", input.review.object.text) | numbers.range(1, 1000000)[_]]) > 0 }',
    );
    expect(
      engine.evaluator.evaluate(many, input({ text: 'a,b,'.repeat(100) }), REGO_TEMPLATE_FUEL).reply,
    ).toBe('spent');
  });

  it("loads Gatekeeper's synced data with a budget of its own, once per change", async () => {
    const policy = await compiled(
      'ownernamespace',
      `violation[{"msg": msg}] {
  ns := input.review.object.metadata.namespace
  not data.inventory.cluster["v1"].Namespace[ns].metadata.labels.owner
  msg := sprintf("namespace %v has no owner", [ns])
}`,
    );
    const namespaces = (count: number) => ({
      inventory: {
        cluster: {
          v1: {
            Namespace: Object.fromEntries(
              Array.from({ length: count }, (_, index) => [
                `ns-${index}`,
                { metadata: { name: `ns-${index}`, labels: index === 0 ? {} : { owner: `team-${index}` } } },
              ]),
            ),
          },
        },
      },
    });
    const object = (namespace: string) => input({ metadata: { name: 'x', namespace } });
    const small = namespaces(10);
    const first = engine.evaluator.evaluate(policy, object('ns-0'), REGO_TEMPLATE_FUEL, {
      key: 'small',
      data: small,
    });
    expect(first.reply).toEqual({ messages: ['namespace ns-0 has no owner'] });
    // The evaluation's own fuel does not pay for the loading; an unchanged key is not loaded again.
    expect(first.used).toBeLessThan(REGO_TEMPLATE_FUEL / 20);
    const again = engine.evaluator.evaluate(policy, object('ns-1'), REGO_TEMPLATE_FUEL, {
      key: 'small',
      data: small,
    });
    expect(again.reply).toEqual({ messages: [] });
    const huge = engine.evaluator.evaluate(policy, object('ns-1'), REGO_TEMPLATE_FUEL, {
      key: 'huge',
      data: namespaces(15_000),
    });
    expect(huge).toEqual({ reply: 'inventory-spent', used: 0 });
    expect(
      engine.evaluator.evaluate(policy, object('ns-0'), REGO_TEMPLATE_FUEL, { key: 'small', data: small })
        .reply,
    ).toEqual({ messages: ['namespace ns-0 has no owner'] });
  });
});
