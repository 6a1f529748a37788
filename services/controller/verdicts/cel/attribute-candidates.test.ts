import { compileCel, toCelInput } from './cel-program';

// A dotted name is read once, by its variable: the other ways @bufbuild/cel plans it (a variable
// named `object.spec.replicas`, then `object.spec`) can never resolve and are not looked up.

/** The bindings as a proxy that records every name the evaluation looks up in them. */
function recordingBindings(bindings: Record<string, unknown>): {
  bindings: Record<string, unknown>;
  namesRead: string[];
} {
  const namesRead: string[] = [];
  const proxy = new Proxy(bindings, {
    get(target, name, receiver) {
      if (typeof name === 'string') namesRead.push(name);
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  return { bindings: proxy, namesRead };
}

const object = toCelInput({
  metadata: { labels: { app: 'web' } },
  spec: {
    replicas: 3,
    containers: [
      { name: 'a', resources: { limits: { cpu: '1' } } },
      { name: 'b', resources: {} },
    ],
  },
});

describe('dotted names read by their variable only', () => {
  it('looks up the variable, not every dotted prefix of the name', () => {
    const { bindings, namesRead } = recordingBindings({ object });
    const outcome = compileCel('object.spec.replicas > 2 && has(object.metadata.labels.app)')(bindings);
    expect(outcome).toMatchObject({ ok: true, value: true });
    expect(new Set(namesRead)).toEqual(new Set(['object']));
  });

  it('reads comprehension variables and the answers are unchanged', () => {
    const { bindings, namesRead } = recordingBindings({ object });
    const program = compileCel('object.spec.containers.all(c, has(c.resources.limits))');
    expect(program(bindings)).toMatchObject({ ok: true, value: false });
    expect(namesRead.filter((name) => name.includes('.'))).toEqual([]);
    expect(
      compileCel('object.spec.containers.exists(c, c.resources.limits.cpu == "1")')({ object }),
    ).toMatchObject({
      ok: true,
      value: true,
    });
  });

  it('still reports a name that no binding gives as an error', () => {
    const outcome = compileCel('missing.field == 1')({ object });
    expect(outcome.ok).toBe(false);
  });

  it('keeps type names, which the registry resolves', () => {
    expect(compileCel('type(object.spec.replicas) == int')({ object })).toMatchObject({
      ok: true,
      value: true,
    });
    expect(compileCel('type(object) == map')({ object })).toMatchObject({ ok: true, value: true });
  });
});
