import { factOfEvaluation } from './evaluation-memo';
import { unlimitedGuard } from './guard/evaluation-guard';

describe('factOfEvaluation', () => {
  it('derives a fact once per evaluation and subject, and anew in the next evaluation', () => {
    const derivations: string[] = [];
    const derive = (name: string) => () => {
      derivations.push(name);
      return { name };
    };
    const object = { kind: 'Deployment' };
    const oldObject = { kind: 'Deployment' };
    const first = unlimitedGuard();
    const value = factOfEvaluation(first, 'pods', object, derive('object'));
    expect(factOfEvaluation(first, 'pods', object, derive('object again'))).toBe(value);
    factOfEvaluation(first, 'pods', oldObject, derive('old object'));
    factOfEvaluation(first, 'cel-input', object, derive('cel input'));
    expect(derivations).toEqual(['object', 'old object', 'cel input']);

    const second = unlimitedGuard();
    const fresh = factOfEvaluation(second, 'pods', object, derive('next evaluation'));
    expect(fresh).not.toBe(value);
    expect(derivations).toEqual(['object', 'old object', 'cel input', 'next evaluation']);
  });

  it('remembers an undefined fact too (a kind without pods)', () => {
    let derivations = 0;
    const guard = unlimitedGuard();
    const service = { kind: 'Service' };
    for (let call = 0; call < 3; call++)
      expect(
        factOfEvaluation(guard, 'pods', service, () => {
          derivations++;
          return undefined;
        }),
      ).toBeUndefined();
    expect(derivations).toBe(1);
  });
});
