import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import {
  definedLabel,
  distinctSites,
  groupLine,
  ledgerView,
  persistentLine,
  persistentRows,
  recordLine,
  recordMatches,
  siteLabel,
  type CacheCellPayload,
  type CachePayload,
  type MissReason,
  type PersistentStatus
} from '../src/cache/model';

const read = <T>(name: string): T =>
  JSON.parse(
    readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')
  ) as T;
/** the text/plain the kernel sent beside each payload (workbench/views/cache.py) */
const texts = read<Record<string, string>>('cache-texts');

describe('the compile line (cache-cell payloads from real cells)', () => {
  for (const name of [
    'cache-cell-first',
    'cache-cell-recompile',
    'cache-cell-static'
  ]) {
    it(`${name}: the same words as the kernel's text`, () => {
      const p = read<CacheCellPayload>(name);
      const lines = [
        ...p.functions,
        ...(p.jax_helpers ? [p.jax_helpers] : [])
      ].map(groupLine);
      expect(lines.join('\n')).toBe(texts[name]);
    });
  }
  it('says retraced for a reason whose call only traced, recompiled for one that compiled', () => {
    // one cell: loss(x) recompiled for f32[5,8], then jax.make_jaxpr(loss) traced f32[7,8];
    // the expected lines are the Python group_line's for the same group
    const p = read<CacheCellPayload>('cache-cell-recompile');
    const g = {
      ...p.functions[0],
      traces: 2,
      reasons: <MissReason[]>[
        {
          kind: 'shape',
          path: 'x',
          before: 'f32[3,8]',
          after: 'f32[5,8]',
          detail: '',
          text: 'x changed f32[3,8] -> f32[5,8]'
        },
        {
          kind: 'shape',
          path: 'x',
          before: 'f32[5,8]',
          after: 'f32[7,8]',
          detail: '',
          text: 'x changed f32[5,8] -> f32[7,8]'
        }
      ]
    };
    // the kernel's own words for the group's times: its line up to the reasons
    const head = texts['cache-cell-recompile'].split(' · recompiled: ')[0];
    expect(head).toMatch(/^jit\(loss\): compiled 1x in .+ \(trace .+\)$/);
    expect(groupLine({ ...g, reasons_from: ['compile', 'trace'] })).toBe(
      `${head} · recompiled: x changed f32[3,8] -> f32[5,8] · retraced: x changed f32[5,8] -> f32[7,8]`
    );
    expect(groupLine({ ...g, reasons_from: ['trace', 'trace'] })).toBe(
      `${head} · retraced: x changed f32[3,8] -> f32[5,8]; x changed f32[5,8] -> f32[7,8]`
    );
    // a payload from before reasons_from: the group's furthest stage, as before
    expect(groupLine(g)).toBe(
      `${head} · recompiled: x changed f32[3,8] -> f32[5,8]; x changed f32[5,8] -> f32[7,8]`
    );
  });
  it('names cells and dedupes call sites', () => {
    const p = read<CacheCellPayload>('cache-cell-static');
    const sites = distinctSites(p.functions[0].call_sites);
    expect(sites).toHaveLength(1);
    expect(siteLabel(sites[0])).toBe('cell [4], line 5');
    expect(
      siteLabel({ file: '/a/b/c/d.py', line: 3, function: 'f', text: '' })
    ).toBe('…/c/d.py:3');
    expect(definedLabel('<ipython-input-1-2bb4acaf654e>:2')).toBe(
      'cell [1], line 2'
    );
    // a notebook cell run by ipykernel lives in /tmp/ipykernel_<pid>/<hash>.py: a cell, not a path
    // (its number is not in the payload; the Python view then says `cell line N` too)
    expect(
      siteLabel({
        file: '/tmp/ipykernel_4242/1234567890.py',
        line: 3,
        function: 'f',
        text: ''
      })
    ).toBe('cell line 3');
    expect(definedLabel('C:\\Temp\\ipykernel_77\\99.py:8')).toBe('cell line 8');
    expect(definedLabel('<workbench-cell-7>:1')).toBe('cell [7], line 1');
  });
});

describe('the ledger (%jaxcache payload)', () => {
  const p = read<CachePayload>('cache-ledger');
  it('filters by function, reason and cell, every word', () => {
    expect(ledgerView(p.functions, '', null, false)).toEqual(
      p.functions.map((_, i) => i)
    );
    const loss = ledgerView(p.functions, 'loss', null, false).map(
      i => p.functions[i].function
    );
    expect(loss).toEqual(['jit(loss)']);
    const bf16 = ledgerView(p.functions, 'bf16', null, false).map(
      i => p.functions[i].function
    );
    expect(bf16).toEqual(['jit(loss)']);
    expect(
      ledgerView(p.functions, 'static mode', null, false).map(
        i => p.functions[i].function
      )
    ).toEqual(['jit(step)']);
    expect(ledgerView(p.functions, 'loss static', null, false)).toEqual([]);
  });
  it('sorts by a numeric column either way', () => {
    const byXla = ledgerView(p.functions, '', 'xla', true).map(
      i => p.functions[i].compile_s
    );
    expect(byXla).toEqual([...byXla].sort((a, b) => b - a));
    const byName = ledgerView(p.functions, '', 'function', false).map(
      i => p.functions[i].function
    );
    expect(byName).toEqual([...byName].sort((a, b) => a.localeCompare(b)));
  });
  it('writes a record as one line with its reasons', () => {
    const rec = p.records.find(r => r.reasons.some(x => x.kind === 'shape'))!;
    expect(recordLine(rec)).toMatch(
      /^cell \[\d+\] · compile \S+ m?s · .*changed/
    );
    expect(recordMatches(rec, 'changed')).toBe(true);
    expect(recordMatches(rec, 'zzz')).toBe(false);
  });
});

describe('persistent cache summary', () => {
  it('on and off', () => {
    const on = read<PersistentStatus>('cache-persistent-on');
    const rows = persistentRows(on);
    expect(rows[0]).toEqual(['directory', on.directory]);
    expect(rows.find(r => r[0] === 'maximum size')?.[1]).toBe('unlimited');
    expect(rows.find(r => r[0] === 'this session')?.[1]).toBe(
      `${on.hits} hits, ${on.misses} misses (${on.written} written), saved 0 s`
    );
    expect(persistentRows({ ...on, directory: null })[0][1]).toMatch(/^off/);
    // '' is off too (Python: `if not p.directory`); -1 (JAX: no size restriction) is no byte count
    expect(persistentRows({ ...on, directory: '' })[0][1]).toMatch(/^off/);
    expect(persistentLine({ ...on, directory: '' })).toBe(
      'persistent cache off'
    );
    expect(
      persistentRows({ ...on, min_entry_size_bytes: -1 }).find(
        r => r[0] === 'and the entry is at least'
      )?.[1]
    ).toBe('any size');
  });
});
