/** How figures are written in the report: fixed digits, n/a for what could not be measured. */

/** @param {number} value @param {number} [digits] */
export function format(value, digits = 0) {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** With its sign, for differences. @param {number} value @param {number} [digits] */
export function signed(value, digits = 0) {
  return Number.isFinite(value) && value >= 0 ? `+${format(value, digits)}` : format(value, digits);
}

/** @param {number} through @param {number} direct */
export function ratio(through, direct) {
  return Number.isFinite(through) && Number.isFinite(direct) && direct !== 0 ? `${format(through / direct, 2)}×` : 'n/a';
}
