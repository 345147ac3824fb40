/**
 * Keys pressed on a control inside an output belong to that output.
 *
 * An output sits inside a notebook cell, and a keydown that bubbles out of it reaches the
 * notebook (whose own keydown handler re-focuses the active cell, or its editor in edit
 * mode) and JupyterLab's command registry (listening on the document, bubbling phase),
 * whose command-mode shortcuts fire on any focused element of the cell that is not a text
 * field: `X` cuts the cell, `D D` deletes it, arrows move to another cell, `A`/`B` insert
 * cells.  So a keydown whose target is a control of the output (search box, canvas, table
 * row, button) stops at the output's root.  Shortcuts with Ctrl, ⌘ or Alt (save, command
 * palette) still reach JupyterLab.  Escape, unless a control used it, clears a text field
 * that holds text (as a search box's own ✕ does); otherwise it hands the keyboard back to
 * the cell (command mode, never the editor), or blurs the control where the output is not
 * in a cell.
 */

/** Whether `ev` is a key an output's control keeps (no Ctrl, ⌘ or Alt held). */
export function isOwnKey(ev: KeyboardEvent): boolean {
  return !ev.ctrlKey && !ev.metaKey && !ev.altKey;
}

/** Escape on a control of `root` that did not use it: back to the cell, not its editor. */
function leave(root: HTMLElement, target: HTMLElement): void {
  const cell = root.closest<HTMLElement>('.jp-Cell');
  if (cell && cell.tabIndex >= 0) {
    cell.focus({ preventScroll: true });
  } else {
    target.blur();
  }
}

/**
 * Keep the keys of `root`'s controls inside `root` (see the module's note); returns the
 * function that removes the listener.
 */
export function keepKeysInside(root: HTMLElement): () => void {
  const onKey = (ev: KeyboardEvent): void => {
    const target = ev.target;
    if (
      !(target instanceof HTMLElement) ||
      target === root ||
      !root.contains(target) ||
      !isOwnKey(ev)
    ) {
      return;
    }
    ev.stopPropagation();
    if (ev.key !== 'Escape' || ev.defaultPrevented) {
      return;
    }
    ev.preventDefault();
    if (target instanceof HTMLInputElement && target.value !== '') {
      target.value = '';
      target.dispatchEvent(new Event('input', { bubbles: true }));
    } else {
      leave(root, target);
    }
  };
  root.addEventListener('keydown', onKey);
  return () => root.removeEventListener('keydown', onKey);
}
