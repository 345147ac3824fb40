/**
 * Which notebook cell a source file is.  jaxpr and HLO payloads carry
 * `cells: {"<file>": {"number": N | null, "cell_id": "..." | null}}` for every file their
 * source lines name that is a notebook cell (a magic's cell or an ordinary cell), so an
 * output can find its cell by the cell id JupyterLab sent with the execute request, and by
 * the prompt number when there is no id (a plain kernel, an old notebook).
 */

import type { CellMap } from '../generated/common';

export type { CellInfo, CellMap } from '../generated/common';

/** A stable key for a cell: its id when known, else `#<prompt number>`; null: not a cell. */
export function cellKey(
  cells: CellMap | undefined,
  file: string
): string | null {
  const info = cells?.[file];
  if (!info) {
    return null;
  }
  if (info.cell_id) {
    return info.cell_id;
  }
  return info.number !== null && info.number !== undefined
    ? `#${info.number}`
    : null;
}
