/**
 * Number formatting shared by the bench, cache, sharding and mesh views: the same words
 * and units as the Python views (`workbench/views/_format.py`), so the two agree.
 */

export const NA = 'n/a';

const SECOND_UNITS: [string, number][] = [['s', 1], ['ms', 1e-3], ['µs', 1e-6], ['ns', 1e-9]];
const BYTE_UNITS: [string, number][] = [['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]];
const SI: [string, number][] = [['P', 1e15], ['T', 1e12], ['G', 1e9], ['M', 1e6], ['k', 1e3]];

function finite(x: number | null | undefined): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

/**
 * `value` to `digits` significant digits in positional notation, no trailing zeros, never
 * rounding the integer part (Python's `sig`: 131 stays 131 at 2 digits).
 */
export function sig(value: number, digits = 3): string {
  if (value === 0 || !Number.isFinite(value)) return value === 0 ? '0' : String(value);
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(value))));
  let text = value.toFixed(decimals);
  if (text.includes('.')) text = text.replace(/0+$/, '').replace(/\.$/, '');
  return text === '-0' || text === '' ? '0' : text;
}

/** The unit `fmtSeconds` picks for `seconds`. */
export function secondsUnit(seconds: number, digits = 3): [string, number] {
  const rounded = Number(seconds.toPrecision(digits));
  for (const [unit, scale] of SECOND_UNITS) if (Math.abs(rounded) >= scale) return [unit, scale];
  return SECOND_UNITS[SECOND_UNITS.length - 1];
}

/** `%timeit`-style: `1.23 ms`. */
export function fmtSeconds(seconds: number | null | undefined, digits = 3): string {
  if (!finite(seconds)) return NA;
  if (seconds === 0) return '0 s';
  const rounded = Number(seconds.toPrecision(digits));
  const [unit, scale] = secondsUnit(rounded, digits);
  return `${sig(rounded / scale, digits)} ${unit}`;
}

/** The number alone, in a unit chosen elsewhere (a breakdown in its total's unit). */
export function fmtInUnit(seconds: number | null | undefined, unit: string, digits = 3): string {
  if (!finite(seconds)) return NA;
  const scale = SECOND_UNITS.find(u => u[0] === unit)?.[1] ?? 1;
  return sig(seconds / scale, digits);
}

/** Binary units: `1.5 MiB`; below a KiB, whole bytes. */
export function fmtBytes(n: number | null | undefined): string {
  if (!finite(n)) return NA;
  for (const [unit, size] of BYTE_UNITS) if (Math.abs(n) >= size) return `${(n / size).toFixed(1)} ${unit}`;
  return `${Math.trunc(n)} B`;
}

/** SI prefixes for counts and rates: `1.23 GFLOP`, `3.2 TB/s`. */
export function fmtCount(n: number | null | undefined, unit = '', digits = 3): string {
  if (!finite(n)) return NA;
  for (const [prefix, size] of SI) if (Math.abs(n) >= size) return `${sig(n / size, digits)} ${prefix}${unit}`;
  return `${sig(n, digits)} ${unit}`.trim();
}

export function fmtPercent(fraction: number | null | undefined, decimals = 1): string {
  if (!finite(fraction)) return NA;
  return `${(fraction * 100).toFixed(decimals)}%`;
}

/** `×12.3` for a ratio. */
export function fmtRatio(r: number | null | undefined): string {
  if (!finite(r)) return NA;
  return `×${sig(r, 3)}`;
}
