import {
  severityRank,
  type ConstraintType,
  type DetailLevel,
  type Effect,
  type Severity,
} from '../../model/api';
import type { Constraint } from '../../model/constraint';
import { isDetailVisible, renderFullText, type Viewer } from '../../model/text';
import { isConstraintNameVisible, viewerForConstraint } from '../../model/name-visibility';
import { redactedReference, renderName } from '../views/constraint-rendering';
import { readMessageFacts, type MessageFacts } from './explain-facts';
import {
  EXPLAIN_RULES,
  matchingRules,
  type Assessment,
  type ExplainCategory,
  type ExplainRule,
  type AssessContext,
} from './explain-rules';
import { renderReadableLine } from '../../model/summary-rules';

// The `explain` tool: from an error message a developer saw to the constraints of the namespace that
// most likely caused it, ranked, each with why. Pure: the rules are in explain-rules.ts, the
// privacy of every returned string follows the viewer's detail level like the resources do.

export type ExplainVerdict = 'likely-causes' | 'no-matching-constraints' | 'outside-forewarn' | 'cannot-tell';
export type Confidence = 'high' | 'medium' | 'low';

export interface ExplainCandidate {
  rank: number;
  name: string;
  /** The opaque reference of a redacted name (`forewarn get --ref`). */
  ref?: string;
  type: ConstraintType;
  severity: Severity;
  effect: Effect;
  source: string;
  summary: string;
  remediationHint: string;
  confidence: Confidence;
  reasons: string[];
  /** The level this candidate was rendered at (issue 24: `full` where the caller may read its source). */
  detailLevel: DetailLevel;
}

export interface ExplainResult {
  namespace: string;
  detailLevel: DetailLevel;
  verdict: ExplainVerdict;
  /** The kinds of error the message was recognised as, most specific first. */
  categories: ExplainCategory[];
  explanation: string;
  candidates: ExplainCandidate[];
}

export const MAX_CANDIDATES = 10;

function confidenceOf(score: number): Confidence {
  if (score >= 6) return 'high';
  if (score >= 3) return 'medium';
  return 'low';
}

interface Scored {
  constraint: Constraint;
  name: string;
  assessment: Assessment;
}

/** Each constraint keeps its best score over the matching rules, and the reasons of all of them. */
function score(
  constraints: readonly Constraint[],
  rules: readonly ExplainRule[],
  facts: MessageFacts,
  viewerOf: (constraint: Constraint) => Viewer,
): Scored[] {
  const scored: Scored[] = [];
  for (const constraint of constraints) {
    const viewer = viewerOf(constraint);
    const context: AssessContext = {
      detailsVisible: isDetailVisible(viewer),
      nameVisible: isConstraintNameVisible(constraint, viewer),
      fullSummary: renderFullText(constraint.summary),
    };
    const assessments = rules
      .map((rule) => rule.assess?.(constraint, facts, context))
      .filter((assessment): assessment is Assessment => assessment !== undefined && assessment.score > 0)
      .sort((left, right) => right.score - left.score);
    if (assessments.length === 0) continue;
    const reasons = [...new Set(assessments.flatMap((assessment) => assessment.reasons))];
    scored.push({
      constraint,
      name: renderName(constraint, viewer),
      assessment: { score: assessments[0].score, reasons },
    });
  }
  return scored.sort(
    (left, right) =>
      right.assessment.score - left.assessment.score ||
      severityRank(left.constraint.severity) - severityRank(right.constraint.severity) ||
      (left.name < right.name ? -1 : left.name > right.name ? 1 : 0),
  );
}

function conclusion(verdict: ExplainVerdict, namespace: string): string {
  switch (verdict) {
    case 'likely-causes':
      return 'The constraints below are ranked by how likely they caused it.';
    case 'no-matching-constraints':
      return `No constraint Forewarn knows of in namespace ${namespace} fits this kind of error, so the cause is likely elsewhere (the application, its Service and endpoints, DNS, the node).`;
    case 'outside-forewarn':
      return '';
    case 'cannot-tell':
      return `Forewarn cannot tell which constraint caused this message: it recognises network and DNS failures, quota and limit range rejections, admission denials and mesh denials, and this is none of them. The report of the namespace (forewarn://reports/${namespace}) lists every constraint that applies.`;
  }
}

export function explainMessage(
  constraints: readonly Constraint[],
  message: string,
  viewer: Viewer,
  rules: readonly ExplainRule[] = EXPLAIN_RULES,
  viewerOf: (constraint: Constraint) => Viewer = () => viewer,
): ExplainResult {
  const facts = readMessageFacts(message);
  const matched = matchingRules(facts, rules);
  const outside = matched.length > 0 && matched.every((rule) => rule.outsideForewarn);
  const ranked = outside ? [] : score(constraints, matched, facts, viewerOf).slice(0, MAX_CANDIDATES);
  const verdict: ExplainVerdict =
    matched.length === 0
      ? 'cannot-tell'
      : outside
        ? 'outside-forewarn'
        : ranked.length > 0
          ? 'likely-causes'
          : 'no-matching-constraints';
  const explanation = [...matched.map((rule) => rule.meaning(facts)), conclusion(verdict, viewer.namespace)]
    .filter((sentence) => sentence !== '')
    .join(' ');
  return {
    namespace: viewer.namespace,
    detailLevel: viewer.level,
    verdict,
    categories: matched.map((rule) => rule.category),
    explanation,
    candidates: ranked.map(({ constraint, name, assessment }, position) => ({
      rank: position + 1,
      name,
      // A redacted candidate keeps its handle: ten `redacted` rows are told apart and quoted by it.
      ...redactedReference(constraint, viewerOf(constraint)),
      type: constraint.type,
      severity: constraint.severity,
      effect: constraint.effect,
      source: constraint.source.kind,
      summary: renderReadableLine(constraint.summary, viewerForConstraint(constraint, viewerOf(constraint))),
      remediationHint: renderReadableLine(
        constraint.remediationHint,
        viewerForConstraint(constraint, viewerOf(constraint)),
      ),
      confidence: confidenceOf(assessment.score),
      reasons: assessment.reasons,
      detailLevel: viewerOf(constraint).level,
    })),
  };
}
