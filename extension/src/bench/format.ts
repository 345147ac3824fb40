/**
 * Number formatting shared by the bench, cache, sharding and mesh views: the same words
 * and units as the Python views (`workbench/views/_format.py`), so the two agree.
 */

export const NA = 'n/a';

const SECOND_UNITS: [string, number][] = [
  ['s', 1],
  ['ms', 1e-3],
  ['µs', 1e-6],
  ['ns', 1e-9]
];
// no TiB: Python's fmt_bytes stops at GiB (2 TiB reads `2048.0 GiB` there, so here too)
const BYTE_UNITS: [string, number][] = [
  ['GiB', 2 ** 30],
  ['MiB', 2 ** 20],
  ['KiB', 2 ** 10]
];
const SI: [string, number][] = [
  ['P', 1e15],
  ['T', 1e12],
  ['G', 1e9],
  ['M', 1e6],
  ['k', 1e3]
];

function finite(x: number | null | undefined): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

/**
 * Python's `f"{x:.{decimals}f}"`: correctly rounded, ties to even.  JS `toFixed` rounds the
 * same exact binary value but breaks exact ties upwards (1.25 -> `1.3`, Python `1.2`), and
 * byte counts hit exact ties often (1280 B is 1.25 KiB), so a tie is detected and rounded
 * to the even digit.
 */
export function pyFixed(x: number, decimals: number): string {
  const d = Math.max(0, Math.min(100, decimals));
  const js = x.toFixed(d);
  const ax = Math.abs(x);
  if (!Number.isFinite(x) || ax >= 1e21 || d >= 100) {
    return js;
  }
  // toFixed(100) is exact here: a tie at digit d+1 has a terminating expansion far shorter
  const [ip, fp] = ax.toFixed(100).split('.');
  if (fp[d] !== '5' || !/^0*$/.test(fp.slice(d + 1))) {
    return js;
  }
  const kept = d === 0 ? ip[ip.length - 1] : fp[d - 1];
  if (Number(kept) % 2 === 1) {
    return js;
  } // odd: rounding away from zero is the even choice
  const text = d === 0 ? ip : `${ip}.${fp.slice(0, d)}`;
  return x < 0 ? `-${text}` : text;
}

/** Python's `float(f"{x:.{digits}g}")`: `x` rounded to `digits` significant digits, ties to even. */
export function pyPrecision(x: number, digits: number): number {
  const ax = Math.abs(x);
  if (x === 0 || !Number.isFinite(x) || ax >= 1e21) {
    return Number(x.toPrecision(digits));
  }
  const [ip, fp] = ax.toFixed(100).split('.');
  const e = ip !== '0' ? ip.length - 1 : -(fp.search(/[1-9]/) + 1);
  if (ip === '0' && e === 0) {
    return Number(x.toPrecision(digits));
  } // below 1e-100
  const decimals = digits - 1 - e;
  if (decimals >= 0) {
    return Number(pyFixed(x, decimals));
  }
  const k = -decimals; // integer digits rounded away
  const drop = ip.slice(ip.length - k);
  const keep = ip.slice(0, ip.length - k);
  const tie = drop[0] === '5' && /^0*$/.test(drop.slice(1)) && /^0*$/.test(fp);
  if (!tie || Number(keep[keep.length - 1]) % 2 === 1) {
    return Number(x.toPrecision(digits));
  }
  return Number(`${x < 0 ? '-' : ''}${keep}${'0'.repeat(k)}`);
}

/**
 * `value` to `digits` significant digits in positional notation, no trailing zeros, never
 * rounding the integer part (Python's `sig`: 131 stays 131 at 2 digits).
 */
export function sig(value: number, digits = 3): string {
  if (value === 0 || !Number.isFinite(value)) {
    return value === 0 ? '0' : String(value);
  }
  const decimals = Math.max(
    0,
    digits - 1 - Math.floor(Math.log10(Math.abs(value)))
  );
  let text = pyFixed(value, decimals);
  if (text.includes('.')) {
    text = text.replace(/0+$/, '').replace(/\.$/, '');
  }
  return text === '-0' || text === '' ? '0' : text;
}

/** The unit `fmtSeconds` picks for `seconds`. */
export function secondsUnit(seconds: number, digits = 3): [string, number] {
  const rounded = pyPrecision(seconds, digits);
  for (const [unit, scale] of SECOND_UNITS) {
    if (Math.abs(rounded) >= scale) {
      return [unit, scale];
    }
  }
  return SECOND_UNITS[SECOND_UNITS.length - 1];
}

/** `%timeit`-style: `1.23 ms`. */
export function fmtSeconds(
  seconds: number | null | undefined,
  digits = 3
): string {
  if (!finite(seconds)) {
    return NA;
  }
  if (seconds === 0) {
    return '0 s';
  }
  const rounded = pyPrecision(seconds, digits);
  const [unit, scale] = secondsUnit(rounded, digits);
  return `${sig(rounded / scale, digits)} ${unit}`;
}

/** The number alone, in a unit chosen elsewhere (a breakdown in its total's unit). */
export function fmtInUnit(
  seconds: number | null | undefined,
  unit: string,
  digits = 3
): string {
  if (!finite(seconds)) {
    return NA;
  }
  const scale = SECOND_UNITS.find(u => u[0] === unit)?.[1] ?? 1;
  return sig(seconds / scale, digits);
}

/** Binary units: `1.5 MiB`; below a KiB, whole bytes. */
export function fmtBytes(n: number | null | undefined): string {
  if (!finite(n)) {
    return NA;
  }
  for (const [unit, size] of BYTE_UNITS) {
    if (Math.abs(n) >= size) {
      return `${pyFixed(n / size, 1)} ${unit}`;
    }
  }
  return `${Math.trunc(n)} B`;
}

/** SI prefixes for counts and rates: `1.23 GFLOP`, `3.2 TB/s`. */
export function fmtCount(
  n: number | null | undefined,
  unit = '',
  digits = 3
): string {
  if (!finite(n)) {
    return NA;
  }
  for (const [prefix, size] of SI) {
    if (Math.abs(n) >= size) {
      return `${sig(n / size, digits)} ${prefix}${unit}`;
    }
  }
  return `${sig(n, digits)} ${unit}`.trim();
}

export function fmtPercent(
  fraction: number | null | undefined,
  decimals = 1
): string {
  if (!finite(fraction)) {
    return NA;
  }
  return `${pyFixed(fraction * 100, decimals)}%`;
}

/** `×12.3` for a ratio. */
export function fmtRatio(r: number | null | undefined): string {
  if (!finite(r)) {
    return NA;
  }
  return `×${sig(r, 3)}`;
}
