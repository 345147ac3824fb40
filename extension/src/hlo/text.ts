/** Lines of the bundle's `text/plain` (JAX's HLO text): an instruction's, a computation's. */

export class HloText {
  private _lines: string[] | null = null;

  constructor(private readonly _text: string) {}

  get lines(): string[] {
    if (!this._lines) {
      this._lines = this._text.split('\n');
    }
    return this._lines;
  }

  /** 1-based line, '' when out of range */
  line(n: number): string {
    return n >= 1 && n <= this.lines.length ? this.lines[n - 1] : '';
  }

  /** lines first..last (1-based, inclusive), cut to `max` lines with a note */
  range(first: number, last: number, max = 400): string {
    if (first < 1 || last < first) {
      return '';
    }
    const end = Math.min(last, first + max - 1, this.lines.length);
    const body = this.lines.slice(first - 1, end).join('\n');
    return end < last ? `${body}\n… ${last - end} more lines` : body;
  }
}

/** The fused computation a fusion calls (its `called` or its `calls=` attribute). */
export function calledComputation(
  called: string[] | undefined,
  attrs: Record<string, string> | undefined
): string | null {
  if (called && called.length) {
    return called[0];
  }
  const calls = attrs?.calls;
  if (!calls) {
    return null;
  }
  return calls.split(',')[0].trim().replace(/^%/, '');
}
