/**
 * Search over every equation (folded or not): primitive, variable names, shapes/dtypes,
 * param text, source line ("cell [3] line 4", file name, function) and name stack; and,
 * second, the text of the equation's line as the user wrote it (`softmax` finds the
 * equations of `jax.nn.softmax(x)`'s line).  The query's whitespace-separated terms must
 * all occur (case-insensitive).
 *
 * The line's text is a fallback, used only when no equation's own text holds the query:
 * one line makes many equations, so `sin` on the line `x = jnp.sin(x) + i` would otherwise
 * find its `add`s too, and the user typing a primitive's name wants that primitive.
 */

import { equationText, type FlatJaxpr } from './rows';

export interface SearchIndex {
  /** equation index -> lower-cased searchable text of the equation itself */
  text: string[];
  /** equation index -> lower-cased text of its source line ('' when none is known) */
  lineText: string[];
}

export function buildSearchIndex(
  flat: FlatJaxpr,
  labels: string[],
  lineTexts: string[] = []
): SearchIndex {
  const text: string[] = new Array(flat.equations);
  const lineText: string[] = new Array(flat.equations);
  for (let e = 0; e < flat.equations; e++) {
    const eq = flat.rows[flat.eqnRow[e]].equation!;
    const src = eq.source;
    const parts = [equationText(flat, eq), labels[e] ?? ''];
    if (src) {
      parts.push(`${src.file}:${src.line}`, src.function);
    }
    if (eq.name_stack) {
      parts.push(eq.name_stack);
    }
    text[e] = parts.join('\u0001').toLowerCase();
    lineText[e] = src ? (lineTexts[e] ?? '').toLowerCase() : '';
  }
  return { text, lineText };
}

function matching(texts: string[], terms: string[], also?: string[]): number[] {
  const out: number[] = [];
  outer: for (let e = 0; e < texts.length; e++) {
    const t = also ? `${texts[e]}\u0001${also[e]}` : texts[e];
    for (const term of terms) {
      if (t.indexOf(term) < 0) {
        continue outer;
      }
    }
    out.push(e);
  }
  return out;
}

/** Equation indices whose own text holds every term of `query`, in program order; when
 * none does, those whose own text and source line together hold them. */
export function search(index: SearchIndex, query: string): number[] {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!terms.length) {
    return [];
  }
  const own = matching(index.text, terms);
  return own.length ? own : matching(index.text, terms, index.lineText);
}
