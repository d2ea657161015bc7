/** The transport the config names (`engines[].transport`), for one engine. */
import type { EngineTransport, TransportKind, TransportOptions } from './engine-transport.js';
import { createHttp1Transport } from './http1-transport.js';
import { createUndiciTransport } from './undici-transport.js';

export function createTransport(kind: TransportKind, options: TransportOptions): EngineTransport {
  return kind === 'undici' ? createUndiciTransport(options) : createHttp1Transport(options);
}
