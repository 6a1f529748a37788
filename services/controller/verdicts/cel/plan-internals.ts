import { dirname, join } from 'node:path';

// The plan's nodes of @bufbuild/cel 0.6.x (dist/cjs/planner.js and access.js), as far as
// runtime-cost.ts reads them. They are module internals, loaded by path because the package does not
// export its planner: runtime-cost.ts throws while planning on a node kind it does not know, so a
// changed @bufbuild/cel fails every CEL test instead of miscounting.

export interface Activation {
  resolve(name: string): unknown;
}

export interface Interpretable {
  id: number;
  eval(activation: Activation): unknown;
}

export interface AccessNode {
  access?(activation: Activation, value: unknown): unknown;
  accessIfPresent?(activation: Activation, value: unknown, presenceOnly: boolean): unknown;
  isPresent?(activation: Activation, value: unknown): unknown;
}

export interface AttributeNode extends AccessNode {
  accesses_?: AccessNode[];
  attrs?: AttributeNode[];
  operand?: Interpretable;
  cond?: Interpretable;
  t?: EvalAttrNode;
  f?: EvalAttrNode;
}

export interface EvalAttrNode extends Interpretable, AccessNode {
  attr: AttributeNode;
  resolve(activation: Activation): unknown;
}

export interface PlannerModule {
  Planner: new (
    functions: unknown,
    registry: unknown,
    namespace: string,
  ) => {
    plan(expression: unknown): Interpretable;
  };
}

export interface EvalContextModule {
  withEvalContext<T>(context: { registry: unknown }, node: T): T;
}

export interface ActivationModule {
  ObjectActivation: new (data: Record<string, unknown>) => Activation;
}

const celDistribution = dirname(require.resolve('@bufbuild/cel'));
/* eslint-disable @typescript-eslint/no-require-imports -- the planner is not exported; see above */
export const plannerModule = require(join(celDistribution, 'planner.js')) as PlannerModule;
export const evalContextModule = require(join(celDistribution, 'eval.js')) as EvalContextModule;
export const activationModule = require(join(celDistribution, 'activation.js')) as ActivationModule;
/* eslint-enable @typescript-eslint/no-require-imports */
