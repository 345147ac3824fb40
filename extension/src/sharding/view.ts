/**
 * `application/vnd.jax-workbench.sharding+json`: every array's layout as a card (tiles on a
 * canvas, coloured by the set of devices holding each shard; hover for its ranges, shape and
 * devices).  Up to 2,000 layouts arrive: cards are built a page at a time, a filter box
 * finds arrays by path, dtype or spec.
 */

import { add, el, onThemeChange } from '../common/dom';
import type { FeatureViewFactory } from '../common/featureView';
import { LayoutCards, Tooltip } from './card';
import { DeviceSetColors, filterLayouts, type ShardingPayload } from './model';

export const PAGE = 24;

export const shardingView: FeatureViewFactory = () => {
  let cards: LayoutCards | null = null;
  let stopTheme: (() => void) | null = null;
  return {
    render(host, raw, ctx) {
      const payload = raw as unknown as ShardingPayload;
      host.textContent = '';
      const root = add(host, el('div', 'jwb-sh-ext'));
      const layouts = payload.layouts ?? [];
      const tip = new Tooltip(root);
      cards?.dispose();
      cards = new LayoutCards(root, new DeviceSetColors(), tip);
      const head = add(root, el('div', 'jwb-sh-bar'));
      const total = payload.total_layouts ?? layouts.length;
      add(
        head,
        el(
          'span',
          'jwb-sh-count',
          `${layouts.length} array${layouts.length === 1 ? '' : 's'}` +
            (total > layouts.length
              ? ` (the first ${layouts.length} of ${total}; the result's .layouts has all)`
              : '')
        )
      );
      const list = add(root, el('div', 'jwb-sh-list'));
      const more = el('button', 'jwb-sh-more jp-mod-styled');
      let shown: number[] = [];
      let drawn = 0;
      const page = (): void => {
        const stop = Math.min(shown.length, drawn + PAGE);
        for (; drawn < stop; drawn++) {
          cards!.card(list, layouts[shown[drawn]]);
        }
        more.hidden = drawn >= shown.length;
        more.textContent = `show ${Math.min(PAGE, shown.length - drawn)} more (${shown.length - drawn} not shown)`;
      };
      const refill = (query: string): void => {
        list.textContent = '';
        cards!.clear();
        shown = filterLayouts(layouts, query);
        drawn = 0;
        page();
        root.dataset.shown = String(shown.length);
      };
      if (layouts.length > 4) {
        const filter = add(head, el('input', 'jwb-sh-filter jp-mod-styled'));
        filter.type = 'search';
        filter.placeholder = 'filter arrays: path, dtype, spec';
        filter.addEventListener('input', () => refill(filter.value));
      }
      add(root, more).addEventListener('click', page);
      refill('');
      stopTheme?.();
      stopTheme = onThemeChange(() => cards?.redrawAll());
      cards.whenDrawn(() => ctx.interactive());
    },
    dispose() {
      stopTheme?.();
      stopTheme = null;
      cards?.dispose();
      cards = null;
    }
  };
};
