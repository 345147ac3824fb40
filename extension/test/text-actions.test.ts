// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';

import {
  cutNote,
  fileStem,
  isCut,
  savedText,
  textActions
} from '../src/common/textActions';

const TEXT = ['a', 'b', 'c', 'd'].join('\n');
const WHOLE = { lines: 4, bytes: 7, shown_lines: 4, shown_bytes: 7 };
const CUT = { lines: 100, bytes: 5000, shown_lines: 4, shown_bytes: 7 };

describe('text actions', () => {
  it('keep the saved text less the line on what was left out', () => {
    expect(savedText(TEXT, WHOLE)).toBe(TEXT);
    expect(savedText(TEXT, undefined)).toBe(TEXT); // a payload from before the bound
    expect(savedText(`${TEXT}\n[… 96 more lines]`, CUT)).toBe(TEXT);
    expect(savedText(undefined, CUT)).toBe('');
    // one line over the byte bound: the kernel keeps its head (shown_lines == lines == 1),
    // and the line on what was left out still follows it
    const ONE = {
      lines: 1,
      bytes: 400_000,
      shown_lines: 1,
      shown_bytes: 200_000
    };
    const head = 'x'.repeat(200_000);
    expect(savedText(`${head}\n[… 0 more lines (0.2 MB) left out]`, ONE)).toBe(
      head
    );
    expect(isCut(WHOLE)).toBe(false);
    expect(isCut(undefined)).toBe(false);
    expect(isCut(CUT)).toBe(true);
  });

  it('say honestly where the whole text is when the notebook saves only its first lines', () => {
    const note = cutNote(CUT);
    expect(note).toContain('first 4 of 100 lines');
    expect(note).toContain('.text');
    const row = textActions(`${TEXT}\n[…]`, CUT, 'jaxpr', 'f.jaxpr.txt');
    expect(row.querySelector('.jwb-text-copy')?.textContent).toBe(
      'copy saved lines'
    );
    expect(row.querySelector('.jwb-text-download')?.getAttribute('title')).toBe(
      'Download first 4 lines of the jaxpr as f.jaxpr.txt'
    );
    expect(row.querySelector('.jwb-text-note')?.textContent).toBe(note);
    const whole = textActions(TEXT, WHOLE, 'jaxpr', 'f.jaxpr.txt');
    expect(whole.querySelector('.jwb-text-copy')?.textContent).toBe(
      'copy text'
    );
    expect(whole.querySelector('.jwb-text-note')).toBeNull();
  });

  it('name the download after the output', () => {
    expect(fileStem('vmap(grad(loss), in_axes=(None, 0))')).toBe(
      'vmap_grad_loss_in_axes_None_0'
    );
    expect(fileStem('∂')).toBe('output');
  });
});
