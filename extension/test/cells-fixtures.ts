/** Cell badges as the kernel sends them, for the cells tests. */
import type { CellBadge } from '../src/sidepanel/protocol';

/** the badge of run 3 of cell 5: one compile of 250 ms, no miss (fields in `over` replace these) */
export const badge = (over: Partial<CellBadge> = {}): CellBadge => ({
  cell: '5',
  cell_id: 'c-1',
  run: 3,
  t: 1000,
  compiles: 1,
  traces: 1,
  lowers: 1,
  compile_s: 0.25,
  misses: 0,
  first_reason: null,
  persistent_hits: 0,
  inspections: 0,
  ...over
});

/** the same run, compiled twice: the second compile a miss for a new shape of `w` */
export const recompiledBadge = (over: Partial<CellBadge> = {}): CellBadge =>
  badge({
    compiles: 2,
    traces: 2,
    lowers: 2,
    compile_s: 1.2,
    misses: 1,
    first_reason: 'w: shape (3,) → (4,)',
    ...over
  });
