/**
 * Progress goes to stderr, so stdout carries only the report.
 * @param {string} message
 */
export function log(message) {
  process.stderr.write(`bench: ${message}\n`);
}

/**
 * A taskgate's warn and error log lines, as one warning for the report.
 * @param {string} name @param {string} text
 */
export function logWarnings(name, text) {
  const lines = text.split('\n').filter((line) => line.includes('"level":"warn"') || line.includes('"level":"error"'));
  return lines.length === 0 ? [] : [`${name} logged ${lines.length} warnings or errors, e.g. ${lines[0]?.slice(0, 300)}`];
}
