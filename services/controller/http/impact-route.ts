import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { KubernetesObject } from '../../model/kubernetes';
import {
  ImpactRequestError,
  proposedObjectsOf,
  type ImpactOptions,
  type ImpactReport,
} from '../risks/impact';
import { RequestBudget } from '../check/request-budget';
import { apiViewLevel } from './api-auth';

// `POST /api/v1/impact` (issue 35): the workloads proposed policy objects would reject or warn about.
// The answer names workloads of every namespace the policies reach, so it is given at the `full`
// level only (the webhook's rule for the /api/v1 routes, or `--detail-level=full`); below it, 403.
// Each request has a CPU budget (check/request-budget.ts), as the MCP `check` has: the workloads it
// has not reached when the budget is spent are counted in the answer, not evaluated.

/** Policies are larger than the objects the admission check takes: several per request. */
export const IMPACT_BODY_LIMIT = '2mb';

export type AnswerImpact = (
  objects: readonly KubernetesObject[],
  options?: ImpactOptions,
) => Promise<ImpactReport>;

export function impactHandler(
  answer: AnswerImpact | undefined,
  synced: () => boolean,
  budgetOfRequest: () => RequestBudget = () => new RequestBudget(),
): RequestHandler {
  const readBody = express.json({ limit: IMPACT_BODY_LIMIT, type: () => true });
  return (request: Request, response: Response, next: NextFunction) => {
    if (!answer) return response.status(404).json({ error: 'impact is not evaluated by this controller' });
    const level = apiViewLevel(response);
    if (level !== 'full')
      return response.status(403).json({
        error: `impact names workloads of every namespace a policy reaches: it needs the full detail level; this answer is at ${level}`,
      });
    readBody(request, response, (failure?: unknown) => {
      if (failure) return next(failure);
      if (!synced())
        return response.status(503).json({ error: 'the index has not completed its first sync yet' });
      let objects: KubernetesObject[];
      try {
        objects = proposedObjectsOf(request.body);
      } catch (error) {
        if (error instanceof ImpactRequestError) return response.status(400).json({ error: error.message });
        return next(error);
      }
      answer(objects, { budget: budgetOfRequest() }).then((report) => response.json(report), next);
    });
  };
}
