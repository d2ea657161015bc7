/** Writing dashboard replies: HTML pages, redirects and assets, each with the same protective headers. */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Asset } from './assets.js';
import type { SafeHtml } from './html.js';

/**
 * Scripts and styles come only from `/dashboard/assets/` (chart data is JSON
 * in a non-executed script block), forms post only here, and no other site
 * may frame a page.
 */
const securityHeaders: OutgoingHttpHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

export function sendHtml(response: ServerResponse, status: number, page: SafeHtml, headers: OutgoingHttpHeaders): void {
  if (response.headersSent || response.destroyed) return;
  const body = Buffer.from(page.text, 'utf8');
  response.writeHead(status, {
    ...headers,
    ...securityHeaders,
    'content-type': 'text/html; charset=utf-8',
    'content-length': body.length,
    'cache-control': 'no-store',
  });
  response.end(body);
}

/** 303, so a form post is followed by a GET. */
export function redirect(response: ServerResponse, location: string, headers: OutgoingHttpHeaders): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(303, { ...headers, ...securityHeaders, location, 'content-length': 0, 'cache-control': 'no-store' });
  response.end();
}

export function sendAsset(request: IncomingMessage, response: ServerResponse, asset: Asset, headers: OutgoingHttpHeaders): void {
  const common = { ...headers, 'x-content-type-options': 'nosniff', etag: asset.etag, 'cache-control': 'no-cache' };
  if (request.headers['if-none-match'] === asset.etag) {
    response.writeHead(304, common);
    response.end();
    return;
  }
  response.writeHead(200, { ...common, 'content-type': asset.contentType, 'content-length': asset.body.length });
  response.end(asset.body);
}
