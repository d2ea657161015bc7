#!/usr/bin/env node
/**
 * An OTLP/HTTP receiver that accepts every export and discards it: the
 * collector behind the "OTel export on" path of bench/overhead.mjs, in its
 * own process so its CPU is never counted as taskgate's.
 *
 *   node bench/otlp-sink.mjs [--port N]
 *
 * prints one JSON line `{"otlp_sink":"listening","url":"http://127.0.0.1:N",...}`
 * and answers every POST with 200 and an empty export response (protobuf or
 * JSON, as the request came).
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
let spansBytes = 0;
const server = createServer((request, response) => {
  request.on('data', (chunk) => {
    spansBytes += chunk.length;
  });
  request.on('end', () => {
    const json = request.headers['content-type'] === 'application/json';
    response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
    response.end(json ? '{}' : '');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ otlp_sink: 'listening', url: `http://127.0.0.1:${port}`, port, pid: process.pid })}\n`);
});
process.on('SIGTERM', () => {
  process.stderr.write(`otlp sink: ${spansBytes} bytes of spans received\n`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
