/**
 * Where a row an editor selected goes: into the part of the jaxpr list the user sees.
 *
 * The list is an inner scroller (at most MAX_LIST_HEIGHT tall) inside the notebook's own
 * scroller (and, with JupyterLab's "scrolled" outputs, the output area's).  Scrolling only the
 * list is not enough: below a tall `%%jaxpr` cell the list is partly or wholly below the
 * fold, and a row centred in it is off screen though the list "scrolled to it".  So:
 *
 * 1. a row already on screen stays where it is (nothing moves);
 * 2. else, when part of the list is on screen, only the list scrolls: the row goes to the
 *    top of that part (centred when the whole list is on screen);
 * 3. else the row goes near the list's top and the enclosing scrollers move by the least
 *    that shows it (as `scrollIntoView({block: 'nearest'})` would), but only if the
 *    editor's cursor line stays on screen: the user is typing there, and a notebook that
 *    scrolls the line away (and back on the next keystroke) would be worse than a row
 *    that waits, lit, until the user scrolls to it.  Focus is never touched.
 *
 * The geometry is plain numbers (client coordinates), so the plan is tested without a
 * browser's layout; the DOM half only measures and applies it.
 */

/** A vertical extent in client coordinates. */
export interface Span {
  top: number;
  bottom: number;
}

/** One scroller around the list: its client box, its scroll position and range. */
export interface ScrollerBox extends Span {
  scrollTop: number;
  maxScrollTop: number;
  /** whether the editor's cursor line moves with it (the notebook's scroller does) */
  holdsCursor: boolean;
}

export interface RevealInput {
  rowHeight: number;
  /** the row's index among the list's drawn (unfolded) rows */
  index: number;
  /** the list's client box (inside its border) and scroll state */
  list: ScrollerBox;
  /** the scrollers around the list, innermost first (the window's extent is the last) */
  outer: ScrollerBox[];
  /** the editor's cursor line, or null (then no outer scroller moves) */
  cursor: Span | null;
  /** whether outer scrollers may move at all (an editor's click, first output to ask) */
  mayScrollOuter: boolean;
  /** room kept between a revealed row and its scroller's edge */
  margin: number;
}

export interface RevealPlan {
  /** the list's new scrollTop (null: leave it) */
  listScrollTop: number | null;
  /** how far each outer scroller scrolls (same order as `outer`; all zero: none moves) */
  outerDeltas: number[];
  /** whether the row is on screen once the plan is applied */
  seen: boolean;
}

const EPS = 0.5;

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}

/** The part of `a` inside every one of `boxes`. */
export function clip(a: Span, boxes: Span[]): Span {
  let top = a.top;
  let bottom = a.bottom;
  for (const b of boxes) {
    top = Math.max(top, b.top);
    bottom = Math.min(bottom, b.bottom);
  }
  return { top, bottom };
}

function inside(top: number, h: number, s: Span): boolean {
  return top >= s.top - EPS && top + h <= s.bottom + EPS;
}

/** How far a scroller must scroll so [top, top + h) is in `box` with `margin` around it. */
export function nearestDelta(
  top: number,
  h: number,
  box: Span,
  margin: number
): number {
  const room = Math.max(0, Math.min(margin, (box.bottom - box.top - h) / 2));
  if (top + h > box.bottom - room + EPS) {
    return top + h - (box.bottom - room);
  }
  if (top < box.top + room - EPS) {
    return top - (box.top + room);
  }
  return 0;
}

export function planReveal(inp: RevealInput): RevealPlan {
  const h = inp.rowHeight;
  const { list } = inp;
  const none = inp.outer.map(() => 0);
  const rowAt = (st: number): number => list.top + inp.index * h - st;
  const fit = (st: number): number => clamp(st, 0, list.maxScrollTop);
  const band = clip(list, inp.outer);
  // 1. on screen already
  if (inside(rowAt(list.scrollTop), h, band)) {
    return { listScrollTop: null, outerDeltas: none, seen: true };
  }
  // 2. the list's part on screen can show it
  const whole = band.top <= list.top + EPS && band.bottom >= list.bottom - EPS;
  if (band.bottom - band.top >= h) {
    const viewH = list.bottom - list.top;
    const context = band.bottom - band.top >= 6 * h ? 2 * h : 0;
    const st = fit(
      whole
        ? inp.index * h - viewH / 2 + h / 2
        : inp.index * h - (band.top - list.top) - context
    );
    if (inside(rowAt(st), h, band)) {
      return { listScrollTop: st, outerDeltas: none, seen: true };
    }
  }
  // 3. near the list's top, and the outer scrollers bring it on screen
  const st = fit(inp.index * h - 2 * h);
  if (inp.mayScrollOuter && inp.cursor) {
    let top = rowAt(st);
    let cursor: Span = { ...inp.cursor };
    const boxes = inp.outer.map(b => ({ ...b }));
    const deltas = [...none];
    for (let k = 0; k < boxes.length; k++) {
      const b = boxes[k];
      const want = nearestDelta(top, h, b, inp.margin);
      const d = clamp(b.scrollTop + want, 0, b.maxScrollTop) - b.scrollTop;
      if (d === 0) {
        continue;
      }
      deltas[k] = d;
      top -= d;
      // the boxes inside this scroller move with its content
      for (let j = 0; j < k; j++) {
        boxes[j].top -= d;
        boxes[j].bottom -= d;
      }
      if (b.holdsCursor) {
        cursor = { top: cursor.top - d, bottom: cursor.bottom - d };
      }
    }
    // the cursor line is seen through the scrollers that hold it (not the output's own)
    const seenCursor = clip(
      { top: -Infinity, bottom: Infinity },
      boxes.filter(b => b.holdsCursor)
    );
    const moved = deltas.reduce((a, d) => a + d, 0);
    const listBand = clip(
      { top: list.top - moved, bottom: list.bottom - moved },
      boxes
    );
    if (
      deltas.some(d => d !== 0) &&
      inside(top, h, listBand) &&
      inside(cursor.top, cursor.bottom - cursor.top, seenCursor)
    ) {
      return { listScrollTop: st, outerDeltas: deltas, seen: true };
    }
  }
  return { listScrollTop: st, outerDeltas: none, seen: false };
}

// -- the DOM half ---------------------------------------------------------------------------

/** The scrolling ancestors of `el`, innermost first. */
export function scrollingAncestors(el: HTMLElement): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (let p = el.parentElement; p; p = p.parentElement) {
    const oy = getComputedStyle(p).overflowY;
    if (
      (oy === 'auto' || oy === 'scroll' || oy === 'overlay') &&
      p.scrollHeight > p.clientHeight + 1
    ) {
      out.push(p);
    }
  }
  const doc = document.scrollingElement as HTMLElement | null;
  if (doc && !out.includes(doc) && doc.scrollHeight > doc.clientHeight + 1) {
    out.push(doc);
  }
  return out;
}

/** The window's extent, as a scroller that never scrolls (the last clip of every box). */
export function windowBox(): ScrollerBox {
  return {
    top: 0,
    bottom: window.innerHeight,
    scrollTop: 0,
    maxScrollTop: 0,
    holdsCursor: true
  };
}

/** An element's scroll box in client coordinates (the window's for the document's). */
export function scrollerBox(
  s: HTMLElement,
  cursorLine: Element | null
): ScrollerBox {
  const max = Math.max(0, s.scrollHeight - s.clientHeight);
  if (s === document.scrollingElement) {
    return {
      top: 0,
      bottom: window.innerHeight,
      scrollTop: s.scrollTop,
      maxScrollTop: max,
      holdsCursor: true
    };
  }
  const r = s.getBoundingClientRect();
  const top = r.top + s.clientTop;
  return {
    top,
    bottom: top + s.clientHeight,
    scrollTop: s.scrollTop,
    maxScrollTop: max,
    holdsCursor: !!cursorLine && s.contains(cursorLine)
  };
}

/** The line of the focused editor that holds its cursor (CodeMirror 6), or null. */
export function cursorLine(): HTMLElement | null {
  const active = document.activeElement;
  const editor = active?.closest('.cm-editor');
  if (!editor) {
    return null;
  }
  const sel = document.getSelection();
  let node: Node | null = sel?.focusNode ?? null;
  if (node && node.nodeType !== Node.ELEMENT_NODE) {
    node = node.parentElement;
  }
  let elx = node as Element | null;
  if (elx?.classList.contains('cm-content')) {
    const kids = elx.children;
    elx = kids[Math.min(sel!.focusOffset, kids.length - 1)] ?? null;
  }
  const line = elx?.closest<HTMLElement>('.cm-line') ?? null;
  if (line && editor.contains(line)) {
    return line;
  }
  return editor.querySelector<HTMLElement>('.cm-activeLine');
}
