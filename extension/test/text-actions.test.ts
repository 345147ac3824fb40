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
    const row = textActions(
      `${TEXT}\n[… 96 more lines left out: the full text is .text of the returned object (e.g. _.text or Out[n].text)]`,
      CUT,
      'jaxpr',
      'f.jaxpr.txt'
    );
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

  it("name the attribute the kernel's left-out line names (an Inspection's is .jaxpr_text)", () => {
    const line = (where: string): string =>
      `${TEXT}\n[… 96 more lines (0 KB) left out of 100 lines, 5 KB: the full text is ` +
      `${where} of the returned object (e.g. _${where} or Out[n]${where}), kept by the ` +
      'kernel, not saved in the notebook]';
    const inspection = textActions(line('.jaxpr_text'), CUT, 'jaxpr', 'f.txt');
    const note = inspection.querySelector('.jwb-text-note')?.textContent ?? '';
    expect(note).toContain('_.jaxpr_text');
    expect(note).not.toMatch(/_\.text\b/);
    const display = textActions(line('.text'), CUT, 'jaxpr', 'f.txt');
    expect(display.querySelector('.jwb-text-note')?.textContent).toContain(
      '_.text'
    );
    // a record with no such attribute: the kernel's line names none, nor does the note
    const none = textActions(
      `${TEXT}\n[… 96 more lines (0 KB) left out of 100 lines, 5 KB, not saved in the notebook]`,
      CUT,
      'jaxpr',
      'f.txt'
    );
    const plain = none.querySelector('.jwb-text-note')?.textContent ?? '';
    expect(plain).toContain('first 4 of 100 lines');
    expect(plain).not.toContain('.text');
  });

  it('name the download after the output', () => {
    expect(fileStem('vmap(grad(loss), in_axes=(None, 0))')).toBe(
      'vmap_grad_loss_in_axes_None_0'
    );
    expect(fileStem('∂')).toBe('output');
  });
});
