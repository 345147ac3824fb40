/**
 * Copy and download the text of an HLO or jaxpr output (JAX's own printing).
 *
 * A saved notebook holds only the first lines of a big text: the kernel bounds `text/plain`
 * (workbench/views/_bounds.py) and tells the payload how much it kept (`text_size`).  The
 * buttons copy or download the text the output holds; when that is cut they say so in their
 * labels, and a note says where the whole text is: `.text` of the cell's result in the
 * kernel (`_.text`, `Out[n].text`).  The renderer has no kernel connection, so it never
 * pretends to fetch more than the notebook saved.
 */

import type { TextSize } from '../generated/common';
import { el } from './dom';

export type { TextSize };

/** The JAX text the output holds: `text/plain` less the closing "left out" line. */
export function savedText(plain: unknown, size: TextSize | undefined): string {
  const text = typeof plain === 'string' ? plain : '';
  if (!isCut(size)) {
    return text;
  }
  // a cut text/plain is the kept head, a newline, and the line on what was left out (also
  // when a single line over the byte bound was cut inside: shown_lines == lines then)
  const end = text.lastIndexOf('\n');
  return end < 0 ? '' : text.slice(0, end);
}

/** Whether `text/plain` holds less than the whole text. */
export function isCut(size: TextSize | undefined): boolean {
  return (
    !!size && (size.shown_lines < size.lines || size.shown_bytes < size.bytes)
  );
}

function megabytes(n: number): string {
  return n >= 100_000
    ? `${(n / 1e6).toFixed(1)} MB`
    : `${Math.max(1, Math.round(n / 1e3))} KB`;
}

/**
 * The attribute holding the whole text, as the kernel's left-out line (the last line of a
 * cut `text/plain`) names it: `.text` of a display, `.jaxpr_text` of an Inspection shown on
 * its own; null when the line names none (a record without one).
 */
export function wholeTextAttribute(plain: unknown): string | null {
  const text = typeof plain === 'string' ? plain : '';
  const last = text.slice(text.lastIndexOf('\n') + 1);
  const m = /e\.g\. _(\.[A-Za-z_]\w*)/.exec(last);
  return m ? m[1] : null;
}

/** The note under the buttons of a cut text: how much is saved, where the rest is
 * (`where`: the attribute of the cell's result that has it, null if none). */
export function cutNote(
  size: TextSize,
  where: string | null = '.text'
): string {
  const saved =
    `The notebook saves the first ${size.shown_lines.toLocaleString('en-US')} of ` +
    `${size.lines.toLocaleString('en-US')} lines (${megabytes(size.shown_bytes)} of ` +
    `${megabytes(size.bytes)}).`;
  if (where === null) {
    return `${saved} The rest is not saved in the notebook.`;
  }
  return (
    `${saved} The full text is ${where} of this cell's result in the kernel: ` +
    `_${where} right after the cell, or Out[n]${where} (n: its execution count).`
  );
}

/** Hooks the tests replace: the clipboard and the file download. */
export const io = {
  copy(text: string): Promise<void> {
    return navigator.clipboard.writeText(text);
  },
  download(text: string, filename: string): void {
    const url = URL.createObjectURL(
      new Blob([text], { type: 'text/plain;charset=utf-8' })
    );
    const a = document.createElement('a');
    a.href = url;
    a.download = filename;
    a.style.display = 'none';
    document.body.appendChild(a);
    a.click();
    a.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), 0);
  }
};

/**
 * A row of two buttons, copy and download, over the saved text (`what` names it: "HLO
 * text", "jaxpr"); `filename` is the download's name.  With a cut text, a note follows.
 */
export function textActions(
  plain: unknown,
  size: TextSize | undefined,
  what: string,
  filename: string
): HTMLElement {
  const row = el('div', 'jwb-text-actions');
  const text = savedText(plain, size);
  const cut = isCut(size);
  const part =
    cut && size
      ? `first ${size.shown_lines.toLocaleString('en-US')} lines of the ${what}`
      : `the ${what}`;
  const copy = el(
    'button',
    'jwb-text-copy',
    cut ? 'copy saved lines' : 'copy text'
  );
  copy.type = 'button';
  copy.title = `Copy ${part} to the clipboard`;
  const status = el('span', 'jwb-text-status');
  copy.addEventListener('click', () => {
    io.copy(text).then(
      () => {
        status.textContent = 'copied';
      },
      () => {
        status.textContent = 'the browser refused the clipboard';
      }
    );
  });
  const download = el(
    'button',
    'jwb-text-download',
    cut ? 'download saved lines' : 'download .txt'
  );
  download.type = 'button';
  download.title = `Download ${part} as ${filename}`;
  download.addEventListener('click', () => io.download(text, filename));
  row.append(copy, download, status);
  if (cut && size) {
    row.appendChild(
      el('div', 'jwb-text-note', cutNote(size, wholeTextAttribute(plain)))
    );
  }
  return row;
}

/** A file name from an output's label: `grad(loss)` -> `grad_loss`. */
export function fileStem(label: string): string {
  const stem = label.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '');
  return stem || 'output';
}
