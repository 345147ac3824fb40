/**
 * The one place where "these source lines of this cell are selected" is announced.
 *
 * Renderers (jaxpr equations, HLO nodes) and the cell editors (CodeMirror decorations,
 * installed by the app plugin) all publish and subscribe here, so hovering a line in the
 * cell lights up its equations and nodes, and clicking a node scrolls the cell to its line.
 * The mime renderers and the app plugin are two entry points of one extension bundle, so
 * this module is a single instance shared by both.
 */

export interface LineSelection {
  /** cell key (see common/cells.ts `cellKey`) */
  cell: string;
  /** 1-based line numbers in the cell's editor */
  lines: number[];
  /** who published it: 'editor', 'jaxpr', 'hlo', ... (a subscriber ignores its own echo) */
  origin: string;
  /** true: a click (scroll to it); false: a hover (highlight only) */
  reveal: boolean;
}

export interface LineColoring {
  /** cell key -> line -> CSS colour; what outputs of that cell paint their rows with */
  cell: string;
  colors: Map<number, string>;
}

type Listener<T> = (value: T) => void;

export class LinkHub {
  private _selection: LineSelection | null = null;
  private readonly _selectListeners = new Set<Listener<LineSelection | null>>();
  private readonly _colorListeners = new Set<Listener<LineColoring>>();
  private readonly _colorings = new Map<string, Map<number, string>>();

  get selection(): LineSelection | null {
    return this._selection;
  }

  /** Announce a selection (null clears it). */
  select(selection: LineSelection | null): void {
    this._selection = selection;
    for (const listener of [...this._selectListeners]) listener(selection);
  }

  onSelect(listener: Listener<LineSelection | null>): () => void {
    this._selectListeners.add(listener);
    return () => this._selectListeners.delete(listener);
  }

  /** An output announces the colours of the lines it links (the editor paints them). */
  color(coloring: LineColoring): void {
    const merged = this._colorings.get(coloring.cell) ?? new Map<number, string>();
    for (const [line, color] of coloring.colors) merged.set(line, color);
    this._colorings.set(coloring.cell, merged);
    for (const listener of [...this._colorListeners]) listener({ cell: coloring.cell, colors: merged });
  }

  colorsOf(cell: string): Map<number, string> {
    return this._colorings.get(cell) ?? new Map();
  }

  onColor(listener: Listener<LineColoring>): () => void {
    this._colorListeners.add(listener);
    return () => this._colorListeners.delete(listener);
  }
}

/** The extension's hub. */
export const HUB = new LinkHub();
