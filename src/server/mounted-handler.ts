/**
 * A part of the site the composition root mounts on the app under a path
 * prefix (the web dashboard under `/dashboard`): the app hands it every
 * request whose path is the prefix or lies under it, and knows nothing else
 * of it, so the server never imports what it serves there.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * Answers one request. `path` is the whole path (prefix included) without the
 * query string, `query` its parsed query, and `headers` the app's reply
 * headers (the request id), which the handler adds its own to. A rejection
 * becomes an error reply, as a route handler's does.
 */
export type MountedHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
  query: URLSearchParams,
  headers?: OutgoingHttpHeaders,
) => Promise<void>;

export interface Mount {
  /** Where it is mounted: a path of one segment or more, starting with `/`, without a trailing `/` (`/dashboard`). */
  prefix: string;
  handler: MountedHandler;
}
