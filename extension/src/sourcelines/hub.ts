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

export class SourceLineHub {
  private _selection: LineSelection | null = null;
  private readonly _selectListeners = new Set<Listener<LineSelection | null>>();
  private readonly _colorListeners = new Set<Listener<LineColoring>>();
  private readonly _colorings = new Map<string, Map<number, string>>();
  /** owner -> cell -> its colours (what `release(owner)` takes back) */
  private readonly _owned = new Map<string, Map<string, Map<number, string>>>();
  /** cell -> colours announced without an owner (they stay) */
  private readonly _unowned = new Map<string, Map<number, string>>();

  get selection(): LineSelection | null {
    return this._selection;
  }

  /** Announce a selection (null clears it). */
  select(selection: LineSelection | null): void {
    this._selection = selection;
    for (const listener of [...this._selectListeners]) {
      listener(selection);
    }
  }

  onSelect(listener: Listener<LineSelection | null>): () => void {
    this._selectListeners.add(listener);
    return () => this._selectListeners.delete(listener);
  }

  /**
   * An output announces the colours of the lines it links (the editor paints them).
   * With an `owner` (e.g. the output's id) the colours are that owner's until
   * `release(owner)` (the output was cleared or re-rendered); without one they stay.
   */
  color(coloring: LineColoring, owner?: string): void {
    let cells: Map<string, Map<number, string>> | undefined = this._unowned;
    if (owner !== undefined) {
      cells = this._owned.get(owner);
      if (!cells) {
        this._owned.set(owner, (cells = new Map()));
      }
    }
    const mine = cells.get(coloring.cell) ?? new Map<number, string>();
    for (const [line, color] of coloring.colors) {
      mine.set(line, color);
    }
    cells.set(coloring.cell, mine);
    const merged =
      this._colorings.get(coloring.cell) ?? new Map<number, string>();
    for (const [line, color] of coloring.colors) {
      merged.set(line, color);
    }
    this._colorings.set(coloring.cell, merged);
    this._emitColor(coloring.cell, merged);
  }

  /**
   * Take back everything `owner` coloured: each of its cells keeps only the colours other
   * owners (or owner-less calls) still hold, and the editors repaint.
   */
  release(owner: string): void {
    const cells = this._owned.get(owner);
    if (!cells) {
      return;
    }
    this._owned.delete(owner);
    for (const [cell, lines] of cells) {
      const merged = this._colorings.get(cell);
      if (!merged) {
        continue;
      }
      for (const line of lines.keys()) {
        let holder: string | undefined;
        for (const other of this._owned.values()) {
          holder = other.get(cell)?.get(line);
          if (holder) {
            break;
          }
        }
        holder ??= this._unowned.get(cell)?.get(line);
        if (holder) {
          merged.set(line, holder);
        } else {
          merged.delete(line);
        }
      }
      this._emitColor(cell, merged);
    }
  }

  private _emitColor(cell: string, colors: Map<number, string>): void {
    for (const listener of [...this._colorListeners]) {
      listener({ cell, colors });
    }
  }

  colorsOf(cell: string): Map<number, string> {
    return this._colorings.get(cell) ?? new Map();
  }

  onColor(listener: Listener<LineColoring>): () => void {
    this._colorListeners.add(listener);
    return () => this._colorListeners.delete(listener);
  }
}

/** The extension's one source-line hub. */
export const HUB = new SourceLineHub();
