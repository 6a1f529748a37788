import type { Evidence } from '../types';

/** What one validation step of a Kyverno rule decided: pass, fail, skip, or no answer (an empty foreach). */
export type StepResult =
  { kind: 'pass' } | { kind: 'skip' } | { kind: 'none' } | { kind: 'fail'; evidence: Evidence[] };

export const PASS: StepResult = { kind: 'pass' };
