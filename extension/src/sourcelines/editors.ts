/**
 * The cell-editor side of linking (as Compiler Explorer does for C++ and its assembly):
 * every code cell of every notebook gets a CodeMirror extension that paints the lines an
 * output linked (`jwb-line`, background = the line's colour; `jwb-line-selected` for the
 * hub's selection), publishes hovered lines (reveal: false) and the cursor's line
 * (reveal: true) to the hub, and scrolls to a line an output selected.
 *
 * A cell answers to its id and to `#<execution count>` (outputs of kernels that did not
 * send cell ids).  Cells added later, notebooks opened later, re-run cells (new count) and
 * re-rendered outputs (the hub's colours change) are all followed; listeners go with their
 * cell, notebook, and editor.
 */

import {
  RangeSetBuilder,
  StateEffect,
  StateField,
  type Extension,
  type Text
} from '@codemirror/state';
import {
  Decoration,
  EditorView,
  type DecorationSet,
  type ViewUpdate
} from '@codemirror/view';
import type { Cell } from '@jupyterlab/cells';
import type { CodeMirrorEditor } from '@jupyterlab/codemirror';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { HUB, type LineSelection } from './hub';
import { pointerMoved } from './pointer';
import {
  cellKeys,
  keyOfLine,
  lineMarks,
  marksKey,
  mergeColors,
  selectedLines
} from './lines';

interface Marks {
  colors: Map<number, string>;
  selected: number[];
}

const setMarks = StateEffect.define<Marks>();
const EMPTY: Marks = { colors: new Map(), selected: [] };

function decorations(marks: Marks, doc: Text): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  for (const m of lineMarks(marks.colors, marks.selected, doc.lines)) {
    const line = doc.line(m.line);
    builder.add(
      line.from,
      line.from,
      Decoration.line({
        class: m.selected ? 'jwb-line jwb-line-selected' : 'jwb-line',
        attributes: m.color
          ? { style: `background-color: ${m.color}` }
          : undefined
      })
    );
  }
  return builder.finish();
}

const marksField = StateField.define<{ marks: Marks; deco: DecorationSet }>({
  create: () => ({ marks: EMPTY, deco: Decoration.none }),
  update(value, tr) {
    let marks = value.marks;
    let changed = false;
    for (const e of tr.effects) {
      if (e.is(setMarks)) {
        marks = e.value;
        changed = true;
      }
    }
    if (!changed && !tr.docChanged) {
      return value;
    }
    return { marks, deco: decorations(marks, tr.state.doc) };
  },
  provide: f => EditorView.decorations.from(f, v => v.deco)
});

/** What `scrollToCellOnly` uses of a notebook. */
export interface ScrollableNotebook {
  readonly widgets: readonly unknown[];
  scrollToItem(index: number, align?: 'smart'): Promise<void>;
}

/**
 * Scroll `notebook` to show `cell`, and do nothing else.  Not `Notebook.scrollToCell`: that
 * also selects the cell and activates it, and a cell's activation focuses its editor, so an
 * output that linked a line (a click on an equation, Enter in the HLO search box stepping to
 * a node) would move the keyboard into the source and the next keys typed would edit it.
 */
export async function scrollToCellOnly(
  notebook: ScrollableNotebook,
  cell: unknown
): Promise<void> {
  const index = notebook.widgets.indexOf(cell);
  if (index < 0) {
    return; // the cell left the notebook meanwhile
  }
  try {
    await notebook.scrollToItem(index, 'smart');
  } catch {
    /* a newer scroll request superseded this one */
  }
}

/** One code cell's link to the hub. */
class CellLink {
  private _view: EditorView | null = null;
  private _key = '';
  private _colors = new Map<number, string>();
  private _hoverLine = -1;

  constructor(
    readonly cell: Cell,
    readonly panel: NotebookPanel
  ) {
    cell.model.stateChanged.connect(this._onState, this);
  }

  keys(): string[] {
    const model = this.cell.model as Cell['model'] & {
      executionCount?: number | null;
    };
    return cellKeys(model.id, model.executionCount ?? null);
  }

  /** Install the extension in the cell's editor once it exists. */
  attach(): void {
    if (this._view || this.cell.isDisposed) {
      return;
    }
    const editor = this.cell.editor as CodeMirrorEditor | null;
    if (!editor || typeof editor.injectExtension !== 'function') {
      return;
    }
    editor.injectExtension(this._extension());
    this._view = editor.editor;
    this.refreshColors();
  }

  get view(): EditorView | null {
    return this._view;
  }

  /** Recompute this cell's colours from the hub and repaint. */
  refreshColors(): void {
    this._colors = mergeColors(this.keys(), k => HUB.colorsOf(k));
    this.push();
  }

  /** Repaint with the current colours and the hub's selection (only if anything changed). */
  push(): void {
    const view = this._view;
    if (!view) {
      return;
    }
    const selected = selectedLines(this.keys(), HUB.selection);
    const key = marksKey(this._colors, selected);
    if (key === this._key) {
      return;
    }
    this._key = key;
    view.dispatch({ effects: setMarks.of({ colors: this._colors, selected }) });
  }

  /** Scroll the notebook to this cell and the editor to `line`; the keyboard stays put. */
  async reveal(line: number): Promise<void> {
    await scrollToCellOnly(this.panel.content, this.cell);
    await this.cell.ready;
    this.attach();
    const view = this._view;
    if (!view || this.cell.isDisposed) {
      return;
    }
    const doc = view.state.doc;
    const l = doc.line(Math.max(1, Math.min(line, doc.lines)));
    view.dispatch({
      effects: EditorView.scrollIntoView(l.from, { y: 'center' })
    });
  }

  private _extension(): Extension {
    return [
      marksField,
      EditorView.domEventHandlers({
        mousemove: (ev, view) => {
          if (pointerMoved(ev)) {
            this._hover(view, ev);
          }
          return false;
        },
        mouseleave: () => {
          this._leave();
          return false;
        }
      }),
      EditorView.updateListener.of(update => this._onUpdate(update))
    ];
  }

  private _lineAt(view: EditorView, clientY: number): number {
    const block = view.lineBlockAtHeight(clientY - view.documentTop);
    return view.state.doc.lineAt(block.from).number;
  }

  private _hover(view: EditorView, ev: MouseEvent): void {
    const line = this._lineAt(view, ev.clientY);
    if (line === this._hoverLine) {
      return;
    }
    this._hoverLine = line;
    const keys = this.keys();
    const key = keyOfLine(keys, line, k => HUB.colorsOf(k));
    const sel = HUB.selection;
    if (key) {
      HUB.select({ cell: key, lines: [line], origin: 'editor', reveal: false });
    } else if (
      sel &&
      sel.origin === 'editor' &&
      !sel.reveal &&
      keys.includes(sel.cell)
    ) {
      HUB.select(null);
    }
  }

  private _leave(): void {
    this._hoverLine = -1;
    const sel = HUB.selection;
    if (
      sel &&
      sel.origin === 'editor' &&
      !sel.reveal &&
      this.keys().includes(sel.cell)
    ) {
      HUB.select(null);
    }
  }

  private _onUpdate(update: ViewUpdate): void {
    if (!update.selectionSet || !update.view.hasFocus) {
      return;
    }
    const state = update.state;
    const line = state.doc.lineAt(state.selection.main.head).number;
    const keys = this.keys();
    const key = keyOfLine(keys, line, k => HUB.colorsOf(k));
    const sel = HUB.selection;
    // publishing from inside CodeMirror's update cycle would re-enter dispatch
    queueMicrotask(() => {
      if (key) {
        HUB.select({
          cell: key,
          lines: [line],
          origin: 'editor',
          reveal: true
        });
      } else if (sel && sel.origin === 'editor' && keys.includes(sel.cell)) {
        HUB.select(null);
      }
    });
  }

  private _onState(_model: unknown, change: { name: string }): void {
    if (change.name === 'executionCount') {
      this.refreshColors();
    }
  }

  dispose(): void {
    if (!this.cell.isDisposed) {
      this.cell.model.stateChanged.disconnect(this._onState, this);
    }
    if (this._view && !this.cell.isDisposed) {
      try {
        this._view.dispatch({ effects: setMarks.of(EMPTY) });
      } catch {
        /* the view is gone */
      }
    }
    this._view = null;
  }
}

/** Every notebook's cells, kept in step with the tracker. */
class EditorLinker {
  private readonly _links = new Map<NotebookPanel, Map<Cell, CellLink>>();

  constructor(private readonly _tracker: INotebookTracker) {
    _tracker.forEach(panel => this._track(panel));
    _tracker.widgetAdded.connect((_, panel) => this._track(panel));
    HUB.onColor(coloring => {
      for (const link of this._all()) {
        if (link.keys().includes(coloring.cell)) {
          link.refreshColors();
        }
      }
    });
    HUB.onSelect(sel => this._onSelect(sel));
  }

  private *_all(): IterableIterator<CellLink> {
    for (const links of this._links.values()) {
      yield* links.values();
    }
  }

  private _track(panel: NotebookPanel): void {
    if (this._links.has(panel)) {
      return;
    }
    const links = new Map<Cell, CellLink>();
    this._links.set(panel, links);
    let pending = 0;
    const scan = (): void => {
      pending = 0;
      if (panel.isDisposed) {
        return;
      }
      const present = new Set<Cell>();
      for (const cell of panel.content.widgets) {
        if (cell.model.type !== 'code') {
          continue;
        }
        present.add(cell);
        if (links.has(cell)) {
          continue;
        }
        const link = new CellLink(cell, panel);
        links.set(cell, link);
        cell.disposed.connect(() => {
          link.dispose();
          links.delete(cell);
        });
        void cell.ready.then(() => link.attach());
      }
      for (const [cell, link] of links) {
        if (!present.has(cell)) {
          link.dispose();
          links.delete(cell);
        }
      }
    };
    const later = (): void => {
      if (!pending) {
        pending = window.setTimeout(scan, 0);
      }
    };
    const connectModel = (): void => {
      panel.content.model?.cells.changed.connect(later);
      later();
    };
    panel.content.modelChanged.connect(connectModel);
    connectModel();
    void panel.context.ready.then(later);
    panel.disposed.connect(() => {
      if (pending) {
        window.clearTimeout(pending);
      }
      for (const link of links.values()) {
        link.dispose();
      }
      this._links.delete(panel);
    });
  }

  private _onSelect(sel: LineSelection | null): void {
    for (const link of this._all()) {
      link.push();
    }
    if (!sel || !sel.reveal || sel.origin === 'editor' || !sel.lines.length) {
      return;
    }
    const targets = [...this._all()].filter(l => l.keys().includes(sel.cell));
    if (!targets.length) {
      return;
    }
    const current = this._tracker.currentWidget;
    const target = targets.find(l => l.panel === current) ?? targets[0];
    void target.reveal(Math.min(...sel.lines));
  }
}

let linker: EditorLinker | null = null;

/** Link every notebook's cell editors (present and future) to the hub; once per app. */
export function connectEditors(tracker: INotebookTracker): void {
  if (!linker) {
    linker = new EditorLinker(tracker);
  }
}
