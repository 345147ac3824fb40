/**
 * Colour scale for bytes moved (an ESTIMATE from shapes), by quantile: a value's bucket is
 * set by the share of values at least as large, so the top colour goes to at most the top
 * `fractions[0]` share even when most values are alike (ties never push a crowd into the
 * top colour: a value shared by 60% of nodes is in the 60% bucket).
 */

/** bucket 0: nothing moved (parameters); 1 .. fractions.length + 1: light .. heaviest */
export const DEFAULT_FRACTIONS = [0.05, 0.15, 0.35, 0.65];

export interface HeatScale {
  bucket: Uint8Array;
  /** the smallest value in each bucket 1..top (index 0 unused), for the legend */
  minOf: number[];
  top: number;
}

export function heatScale(
  values: ArrayLike<number>,
  fractions: number[] = DEFAULT_FRACTIONS
): HeatScale {
  const n = values.length;
  const top = fractions.length + 1;
  const positive: number[] = [];
  for (let i = 0; i < n; i++) {
    if (values[i] > 0) {
      positive.push(values[i]);
    }
  }
  positive.sort((a, b) => b - a);
  const total = positive.length;
  // value -> share of positive values >= it
  const share = new Map<number, number>();
  for (let i = 0; i < total; i++) {
    const v = positive[i];
    let j = i;
    while (j + 1 < total && positive[j + 1] === v) {
      j++;
    }
    share.set(v, (j + 1) / total);
    i = j;
  }
  const bucketOfShare = (s: number): number => {
    for (let k = 0; k < fractions.length; k++) {
      if (s <= fractions[k] + 1e-12) {
        return top - k;
      }
    }
    return 1;
  };
  const bucket = new Uint8Array(n);
  const minOf: number[] = new Array(top + 1).fill(Infinity);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (!(v > 0)) {
      continue;
    }
    const b = bucketOfShare(share.get(v) as number);
    bucket[i] = b;
    if (v < minOf[b]) {
      minOf[b] = v;
    }
  }
  return { bucket, minOf, top };
}

/** 1234567 -> "1.2 MB"; null or negative (a backend's -1: not known) -> "n/a" */
export function formatBytes(b: number | null | undefined): string {
  if (b === null || b === undefined || !Number.isFinite(b) || b < 0) {
    return 'n/a';
  }
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = b;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** flops: null or negative (GPU backends) -> not reported */
export function formatCount(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x) || x < 0) {
    return 'n/a (not reported)';
  }
  if (x < 1000) {
    return String(x);
  }
  const units = ['', 'K', 'M', 'G', 'T', 'P'];
  let v = x;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)}${units[u]}`;
}
