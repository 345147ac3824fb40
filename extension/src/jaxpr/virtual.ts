/**
 * A virtualised list: fixed row height, a spacer as tall as all rows, and only the rows
 * in (and just around) the visible box in the DOM.  Scrolling schedules one update per
 * animation frame; rows that stay in range keep their nodes.
 */

export interface VirtualListOptions {
  rowHeight: number;
  /** extra rows drawn above and below the visible box */
  overscan?: number;
  /** the scroller's height is min(all rows, this) */
  maxHeight?: number;
  /** a fresh element for item `i` (absolutely positioned by the list) */
  render(i: number): HTMLElement;
}

export class VirtualList {
  readonly scroller: HTMLDivElement;
  private readonly _spacer: HTMLDivElement;
  private _count = 0;
  private _nodes = new Map<number, HTMLElement>();
  private _frame = 0;
  private _first = 0;
  private _last = -1;
  private readonly _onScroll = (): void => this.schedule();

  constructor(private readonly _opts: VirtualListOptions) {
    this.scroller = document.createElement('div');
    this.scroller.className = 'jwb-vlist';
    this._spacer = document.createElement('div');
    this._spacer.className = 'jwb-vlist-spacer';
    this.scroller.appendChild(this._spacer);
    this.scroller.addEventListener('scroll', this._onScroll, { passive: true });
  }

  get count(): number {
    return this._count;
  }

  /** New item count; every row is redrawn. */
  setCount(count: number): void {
    this._count = count;
    this._spacer.style.height = `${count * this._opts.rowHeight}px`;
    if (this._opts.maxHeight) {
      // + room for a horizontal scrollbar, so a short program needs no vertical one
      this.scroller.style.height = `${Math.min(count * this._opts.rowHeight + 16, this._opts.maxHeight)}px`;
    }
    this.refresh();
  }

  /** Redraw the rows in range now (after the items' content or marks changed). */
  refresh(): void {
    for (const node of this._nodes.values()) {
      node.remove();
    }
    this._nodes.clear();
    this._first = 0;
    this._last = -1;
    this.update();
  }

  /** The node of item `i` if it is drawn. */
  nodeOf(i: number): HTMLElement | undefined {
    return this._nodes.get(i);
  }

  drawn(): IterableIterator<[number, HTMLElement]> {
    return this._nodes.entries();
  }

  schedule(): void {
    if (this._frame) {
      return;
    }
    this._frame = requestAnimationFrame(() => {
      this._frame = 0;
      this.update();
    });
  }

  /** Scroll so item `i` is in view (centred when it was out of view). */
  scrollTo(i: number): void {
    const h = this._opts.rowHeight;
    const top = i * h;
    const view = this.scroller.clientHeight || 400;
    if (
      top < this.scroller.scrollTop ||
      top + h > this.scroller.scrollTop + view
    ) {
      this.scroller.scrollTop = Math.max(0, top - view / 2 + h / 2);
    }
    this.update();
  }

  /** Scroll to `top` pixels (clamped by the browser) and draw what is then in range. */
  scrollToOffset(top: number): void {
    this.scroller.scrollTop = top;
    this.update();
  }

  update(): void {
    const h = this._opts.rowHeight;
    const over = this._opts.overscan ?? 10;
    const view = this.scroller.clientHeight || 600;
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / h) - over);
    const last = Math.min(this._count - 1, Math.ceil((top + view) / h) + over);
    if (first === this._first && last === this._last) {
      return;
    }
    for (const [i, node] of this._nodes) {
      if (i < first || i > last) {
        node.remove();
        this._nodes.delete(i);
      }
    }
    const frag = document.createDocumentFragment();
    for (let i = first; i <= last; i++) {
      if (this._nodes.has(i)) {
        continue;
      }
      const node = this._opts.render(i);
      node.style.position = 'absolute';
      node.style.top = `${i * h}px`;
      node.style.height = `${h}px`;
      this._nodes.set(i, node);
      frag.appendChild(node);
    }
    this._spacer.appendChild(frag);
    this._first = first;
    this._last = last;
  }

  dispose(): void {
    if (this._frame) {
      cancelAnimationFrame(this._frame);
    }
    this.scroller.removeEventListener('scroll', this._onScroll);
    this._nodes.clear();
  }
}
