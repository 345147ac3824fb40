/**
 * Lines of the bundle's `text/plain` (JAX's HLO text): an instruction's, a computation's.
 *
 * A big module's `text/plain` holds only its first lines (the payload's `text_size` says
 * how many; the kernel's `.text` has all of it), so a line past them is not there: the
 * details pane then rebuilds an instruction from the parsed module and says so.
 */

import type { CompactInstruction, HloInstruction } from './types';

export class HloText {
  private _lines: string[] | null = null;

  /** `saved`: how many lines of JAX's text `text/plain` holds (all of them if omitted) */
  constructor(
    private readonly _text: string,
    private readonly _saved = Number.POSITIVE_INFINITY
  ) {}

  get lines(): string[] {
    if (!this._lines) {
      this._lines = this._text.split('\n');
    }
    return this._lines;
  }

  /** the number of lines of JAX's text this output holds */
  get saved(): number {
    return Math.min(this._saved, this.lines.length);
  }

  /** whether 1-based line `n` is in the saved text */
  has(n: number): boolean {
    return n >= 1 && n <= this.saved;
  }

  /** 1-based line, '' when out of range or not saved */
  line(n: number): string {
    return this.has(n) ? this.lines[n - 1] : '';
  }

  /** lines first..last (1-based, inclusive), cut to `max` lines and to the saved text, with a note */
  range(first: number, last: number, max = 400): string {
    if (first < 1 || last < first || !this.has(first)) {
      return '';
    }
    const end = Math.min(last, first + max - 1, this.saved);
    const body = this.lines.slice(first - 1, end).join('\n');
    return end < last ? `${body}\n… ${last - end} more lines` : body;
  }
}

/**
 * An instruction as HLO prints it, rebuilt from the parsed module (shape without layout,
 * attributes up to 400 characters, no metadata): for a line the saved text does not hold.
 */
export function rebuiltInstruction(ins: HloInstruction): string {
  const attrs = Object.entries(ins.attrs ?? {})
    .map(([k, v]) => `, ${k}=${v}`)
    .join('');
  const operands = ins.operands.map(o => `%${o}`).join(', ');
  return `${ins.root ? 'ROOT ' : ''}%${ins.name} = ${ins.shape} ${ins.opcode}(${operands})${attrs}`;
}

/** A fused computation's compact row as a line: `%name = shape opcode(operands)`. */
export function rebuiltCompact(row: CompactInstruction): string {
  const [name, opcode, shape, operands] = row;
  return `%${name} = ${shape} ${opcode}(${operands.map(o => `%${o}`).join(', ')})`;
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
