/**
 * Writing replies. `sendError` is the one place an error becomes the OpenAI
 * error body with its status and headers.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { toErrorBody, type GatewayError } from '../api/errors.js';
import type { Metrics } from '../tracking/metrics.js';

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders): void {
  sendJsonText(response, status, JSON.stringify(body), headers);
}

export function sendJsonText(response: ServerResponse, status: number, text: string, headers: OutgoingHttpHeaders): void {
  if (response.headersSent || response.destroyed) return;
  headers['content-type'] = 'application/json';
  headers['content-length'] = Buffer.byteLength(text);
  response.writeHead(status, headers);
  response.end(text);
}

export function sendError(response: ServerResponse, error: GatewayError, headers: OutgoingHttpHeaders): void {
  if (error.headers !== undefined) Object.assign(headers, error.headers);
  // After a 413 or 415 the rest of the body may still be arriving: close rather than drain it.
  if (error.status === 413) headers.connection = 'close';
  sendJson(response, error.status, toErrorBody(error), headers);
}

/** The Prometheus text, on the main port (behind a key) or the metrics address. */
export async function sendMetrics(metrics: Metrics, response: ServerResponse, headers: OutgoingHttpHeaders): Promise<void> {
  const { contentType, body } = await metrics.render();
  response.writeHead(200, { ...headers, 'content-type': contentType });
  response.end(body);
}
