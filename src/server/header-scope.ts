/** The project and workload headers of a chat call, read and echoed. */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { resolveScope, SCOPE_PROJECT_HEADER, SCOPE_WORKLOAD_HEADER, type ScopeNames } from '../api/scope.js';

/**
 * The scope the request's headers give, its body unread (so no `task`): for
 * replies refused before the body is read. Undefined when a scope header is
 * malformed: that 400 is given once a body can be read, and until then the
 * reply names no scope rather than one the call would not be counted against.
 */
export function headerScope(request: IncomingMessage): ScopeNames | undefined {
  try {
    return resolveScope({
      projectHeader: request.headers[SCOPE_PROJECT_HEADER],
      workloadHeader: request.headers[SCOPE_WORKLOAD_HEADER],
      task: undefined,
    });
  } catch {
    return undefined;
  }
}

export function setScopeHeaders(headers: OutgoingHttpHeaders, scope: ScopeNames): void {
  headers[SCOPE_PROJECT_HEADER] = scope.project;
  headers[SCOPE_WORKLOAD_HEADER] = scope.workload;
}
