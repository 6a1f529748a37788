import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { isDns1123Label, isRecord, type KubernetesObject } from '../../model/kubernetes';
import { describeWorkload } from '../../model/workload';
import { buildAdmissionCheck, namespaceOfObject } from '../verdicts/admission-check';
import type { ConstraintDraft } from '../../model/constraint';
import type { WorkloadDescriptor } from '../../model/workload';
import type { ResourceDependencies } from './resource-requests';
import { apiViewLevel } from './api-auth';

/** What the route needs of the app's dependencies (a subset, so this file does not import app.ts). */
export interface AdmissionCheckDependencies extends Pick<ResourceDependencies, 'index' | 'runtimeState'> {
  prospectiveFindings?: (workload: WorkloadDescriptor) => ConstraintDraft[];
}

// `POST /api/v1/admission-check` (DESIGN.md 7b): the verdict of every constraint that applies to one
// object. Bodies up to 1 MiB (the API server's own object limit is larger, so the webhook falls back
// to the label query for bigger objects); invalid JSON or no object: 400; larger: 413.
// Unredacted only for the webhook: the app puts the TokenReview middleware (api-auth.ts) in front of
// this route, and the level it decided is the viewer's.

export const ADMISSION_CHECK_BODY_LIMIT_BYTES = 1024 * 1024;

type Answer = { status: number; body: unknown };

function error(status: number, message: string): Answer {
  return { status, body: { error: message } };
}

function readCheckRequest(
  body: unknown,
): Answer | { object: KubernetesObject; oldObject?: KubernetesObject; operation: 'CREATE' | 'UPDATE' } {
  if (!isRecord(body) || !isRecord(body.object))
    return error(400, 'the request must be a JSON object {"object": {...}, "operation": "CREATE"|"UPDATE"}');
  const operation = body.operation === undefined ? 'CREATE' : body.operation;
  if (operation !== 'CREATE' && operation !== 'UPDATE')
    return error(400, 'operation must be CREATE or UPDATE');
  if (body.oldObject !== undefined && !isRecord(body.oldObject))
    return error(400, 'oldObject must be a JSON object');
  const object = body.object as KubernetesObject;
  if (typeof object.kind !== 'string' || typeof object.apiVersion !== 'string')
    return error(400, 'object must have a string kind and apiVersion');
  if (!isDns1123Label(namespaceOfObject(object)))
    return error(400, 'object.metadata.namespace is not a valid namespace name');
  return {
    object,
    ...(isRecord(body.oldObject) ? { oldObject: body.oldObject as KubernetesObject } : {}),
    operation,
  };
}

function readBodyFailure(failure: unknown): Answer | undefined {
  const type = isRecord(failure) ? failure.type : undefined;
  if (type === 'entity.too.large') return error(413, 'request body larger than 1 MiB');
  if (type === 'entity.parse.failed') return error(400, 'request body is not valid JSON');
  return undefined;
}

export function admissionCheckHandler(dependencies: AdmissionCheckDependencies): RequestHandler {
  const parseBody = express.json({ limit: ADMISSION_CHECK_BODY_LIMIT_BYTES, type: () => true });
  return (request: Request, response: Response, next: NextFunction) => {
    parseBody(request, response, (failure?: unknown) => {
      // This callback runs outside express's own try/catch: a throw must reach the error handler.
      try {
        respond(failure);
      } catch (unexpected) {
        next(unexpected);
      }
    });
    function respond(failure: unknown): unknown {
      if (failure) {
        const answer = readBodyFailure(failure);
        return answer ? response.status(answer.status).json(answer.body) : next(failure);
      }
      const checkRequest = readCheckRequest(request.body);
      if ('status' in checkRequest) return response.status(checkRequest.status).json(checkRequest.body);
      if (!dependencies.runtimeState().source.synced)
        return response.status(503).json({ error: 'the index has not completed its first sync yet' });
      const workload = describeWorkload(checkRequest.object, namespaceOfObject(checkRequest.object));
      const prospective =
        workload && dependencies.prospectiveFindings ? dependencies.prospectiveFindings(workload) : [];
      response.json(
        buildAdmissionCheck(dependencies.index, checkRequest, {
          prospective,
          viewer: { level: apiViewLevel(response) },
        }),
      );
    }
  };
}
