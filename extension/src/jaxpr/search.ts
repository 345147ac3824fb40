/**
 * Search over every equation (folded or not): primitive, variable names, shapes/dtypes,
 * param text, source line ("cell [3] line 4", file name, function), the text of that line
 * as the user wrote it (`softmax` finds the equations of `jax.nn.softmax(x)`'s line) and
 * name stack.  The query's whitespace-separated terms must all occur (case-insensitive).
 */

import { equationText, type FlatJaxpr } from './rows';

export interface SearchIndex {
  /** equation index -> lower-cased searchable text */
  text: string[];
}

export function buildSearchIndex(
  flat: FlatJaxpr,
  labels: string[],
  lineTexts: string[] = []
): SearchIndex {
  const text: string[] = new Array(flat.equations);
  for (let e = 0; e < flat.equations; e++) {
    const eq = flat.rows[flat.eqnRow[e]].equation!;
    const src = eq.source;
    const parts = [equationText(flat, eq), labels[e] ?? ''];
    if (src) {
      parts.push(`${src.file}:${src.line}`, src.function, lineTexts[e] ?? '');
    }
    if (eq.name_stack) {
      parts.push(eq.name_stack);
    }
    text[e] = parts.join('\u0001').toLowerCase();
  }
  return { text };
}

/** Equation indices whose text holds every term of `query`, in program order. */
export function search(index: SearchIndex, query: string): number[] {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!terms.length) {
    return [];
  }
  const out: number[] = [];
  const text = index.text;
  outer: for (let e = 0; e < text.length; e++) {
    const t = text[e];
    for (const term of terms) {
      if (t.indexOf(term) < 0) {
        continue outer;
      }
    }
    out.push(e);
  }
  return out;
}
