/**
 * Progress goes to stderr, so stdout carries only the report.
 * @param {string} message
 */
export function log(message) {
  process.stderr.write(`bench: ${message}\n`);
}
