/**
 * The whole app of `server.metrics`, the optional second address: `GET
 * /metrics` without a key, for a Prometheus on a private network, and a 404
 * for anything else, so nothing but metrics is reachable there.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { NotFoundError } from '../api/errors.js';
import type { Metrics } from '../tracking/metrics.js';
import { newRequestId } from '../fast-path/request-id.js';
import { sendError, sendMetrics } from './http-response.js';

export function createMetricsApp(metrics: Metrics): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return async (request, response) => {
    const headers: OutgoingHttpHeaders = { 'x-request-id': newRequestId() };
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/metrics' && (request.method === 'GET' || request.method === 'HEAD')) await sendMetrics(metrics, response, headers);
    else sendError(response, new NotFoundError('This address serves only GET /metrics.', 'unknown_path'), headers);
  };
}
