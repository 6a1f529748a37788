import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Times one request and counts its answer (the controller's metrics implement it). `route` gives the
 * route template, never the raw path (namespaces and names would explode the label set); it is read
 * when the answer is finished.
 */
export type RequestObserver = (
  request: IncomingMessage,
  response: ServerResponse,
  route: () => string,
) => void;
