import path from 'node:path';
import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { opaBinary } from '../../../test/support/opa-binary';
import { loadFixtureObjects } from '../../../test/support/yaml-fixtures';
import { regoEngine } from '../verdicts/gatekeeper/rego-engine';
import { EvaluationsAwaitingPreparation } from './awaiting-preparation';
import { RiskTracker } from './risk-tracker';
import { regoPreparation } from '../risk-wiring';

// A Gatekeeper constraint whose Rego template is still compiling answers `unknown`: the workloads
// judged meanwhile are judged again once opa is done (CI's fidelity tier once saw every finding of
// such a constraint missing for minutes on a busy machine).

const GATEKEEPER_FIXTURES = path.join(__dirname, '../../../test/fidelity/gatekeeper');

function fixture(file: string, name: string): KubernetesObject {
  const object = loadFixtureObjects(path.join(GATEKEEPER_FIXTURES, file)).get(name);
  if (!object) throw new Error(`${file} has no ${name}`);
  return object;
}

const legacy: KubernetesObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'legacy', namespace: 'shop', uid: 'uid-legacy', resourceVersion: '3' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'legacy' } },
    template: {
      metadata: { labels: { app: 'legacy' } },
      spec: { containers: [{ name: 'legacy', image: 'docker.io/library/nginx:1.27' }] },
    },
  },
  status: { readyReplicas: 1 },
};

const findingsOf = (tracker: RiskTracker) =>
  tracker.risksInNamespace('shop').flatMap((risk) => risk.findings.map((finding) => finding.constraint.name));

it('judges again, once its template has compiled, a workload judged while the template compiled', async () => {
  regoEngine.configure(opaBinary());
  const { index } = indexObjects([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: {} } },
    fixture('templates.yaml', 'k8sallowedrepos'),
    fixture('constraints.yaml', 'images-from-internal-registry'),
  ]);
  const settings = { debounceMs: 0, sliceBudgetMs: 50, maxWorkloadsPerSlice: 64 };
  const waiting = new RiskTracker(index, {
    ...settings,
    preparation: regoPreparation(regoEngine),
  });
  const unaware = new RiskTracker(index, settings);
  try {
    for (const tracker of [waiting, unaware]) {
      tracker.observe(legacy, false);
      tracker.start();
      await tracker.idle();
    }
    // opa compiles in a child process: the first evaluations met the template compiling.
    expect(regoEngine.answersGivenWhileCompiling).toBeGreaterThanOrEqual(2);
    expect(findingsOf(waiting)).toEqual([]);
    await regoEngine.settled();
    await waiting.idle();
    await unaware.idle();
    expect(findingsOf(waiting)).toEqual(['images-from-internal-registry']);
    // Without the preparation, nothing judges it again.
    expect(findingsOf(unaware)).toEqual([]);
  } finally {
    waiting.stop();
    unaware.stop();
  }
}, 900_000);

describe('EvaluationsAwaitingPreparation', () => {
  it('evaluates again only what met a preparation, once, and stops listening when stopped', () => {
    let answers = 0;
    const listeners = new Set<() => void>();
    const again: string[][] = [];
    const awaiting = new EvaluationsAwaitingPreparation(
      {
        answersWhilePreparing: () => answers,
        onPrepared: (listener) => {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      },
      (keys) => again.push(keys),
    );
    expect(awaiting.evaluate('met', () => (answers += 1))).toBe(1);
    awaiting.evaluate('ready', () => 'judged');
    awaiting.evaluate('met-then-ready', () => (answers += 1));
    awaiting.evaluate('met-then-ready', () => 'judged');
    for (const listener of listeners) listener();
    for (const listener of listeners) listener();
    expect(again).toEqual([['met']]);
    awaiting.stop();
    expect(listeners.size).toBe(0);
  });
});
