import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { DetailLevel } from '../../model/api';
import type { Constraint } from '../../model/constraint';
import type { ReadableConstraints } from '../http/resource-requests';
import { RequestBudget } from '../check/request-budget';

// The level an MCP request is answered at is decided per HTTP request, by the same rule as the HTTP
// API's `/api/v1/*` routes (http/api-auth.ts `ApiAccess.levelFor`: `full` for the webhook's
// TokenReview-checked token or under `--api-auth=none`, the controller's `--detail-level` for every
// other caller). The transport hands it to the tool through the SDK's `authInfo`, the one per-request
// value the SDK carries from the HTTP request to a tool's `extra`: a session opened by one caller
// gives nothing to a later request in it that comes without the token.

const LEVEL_KEY = 'forewarnDetailLevel';
const READABLE_KEY = 'forewarnReadableConstraints';
const BUDGET_KEY = 'forewarnRequestBudget';

/** Decides the level of one HTTP request (the HTTP API's `ApiAccess.levelFor`). */
export type RequestLevel = (request: IncomingMessage) => Promise<DetailLevel>;

/** Attaches the decided level to the request, where the SDK transports read `auth` from. */
export function attachViewerLevel(
  request: IncomingMessage & { auth?: AuthInfo },
  level: DetailLevel,
  readable?: ReadableConstraints,
  budget: RequestBudget = new RequestBudget(),
): void {
  // One budget for the HTTP request: every call of a JSON-RPC batch shares it (issue 32, row 3).
  const extra: Record<string, unknown> = { [LEVEL_KEY]: level, [BUDGET_KEY]: budget };
  if (readable) extra[READABLE_KEY] = readable;
  request.auth = { token: '', clientId: 'forewarn-viewer', scopes: [], extra };
}

/**
 * Which constraints this request's caller may read the source of (issue 24: caller-read-access.ts),
 * asked of the API server for the caller of the HTTP request that carried the call; undefined when
 * the controller does not follow callers' RBAC or the call came through no HTTP request.
 */
export function readableConstraintsOf(authInfo: AuthInfo | undefined): ReadableConstraints | undefined {
  const readable = authInfo?.extra?.[READABLE_KEY];
  return typeof readable === 'function'
    ? (readable as (constraints: readonly Constraint[]) => Promise<ReadonlySet<Constraint>>)
    : undefined;
}

/**
 * The level a tool call was decided at; `fallback` (the controller's `--detail-level`) when the call
 * came through no HTTP request that decided one, so a missing decision never reads as `full`.
 */
export function viewerLevelOf(authInfo: AuthInfo | undefined, fallback: DetailLevel): DetailLevel {
  const level = authInfo?.extra?.[LEVEL_KEY];
  return level === 'summary' || level === 'detailed' || level === 'full' ? level : fallback;
}

/**
 * The CPU budget of the HTTP request that carried the call (request-budget.ts); a call that came
 * through no HTTP request gets a budget of its own.
 */
export function requestBudgetOf(authInfo: AuthInfo | undefined): RequestBudget {
  const budget = authInfo?.extra?.[BUDGET_KEY];
  return budget instanceof RequestBudget ? budget : new RequestBudget();
}
