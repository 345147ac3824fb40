/** kind -> the feature view that draws it. */

import { benchView } from '../bench/view';
import { cacheCellView, cachePersistentView, cacheView } from '../cache/view';
import { compileTimeView } from '../compile/view';
import { clusterView } from '../cluster/view';
import { hloView } from '../hlo/view';
import { jaxprCompareView, jaxprView } from '../jaxpr/view';
import { memoryProgramView, memoryView } from '../memory/view';
import { meshExplorerView } from '../mesh/view';
import { profileView } from '../profile/view';
import { shardingView } from '../sharding/view';
import type { Kind } from './payload';
import type { FeatureViewFactory } from './featureView';

export const VIEWS: Record<Kind, FeatureViewFactory> = {
  jaxpr: jaxprView,
  'jaxpr-compare': jaxprCompareView,
  hlo: hloView,
  bench: benchView,
  sharding: shardingView,
  'mesh-explorer': meshExplorerView,
  cache: cacheView,
  'cache-cell': cacheCellView,
  'cache-persistent': cachePersistentView,
  profile: profileView,
  'compile-time': compileTimeView,
  memory: memoryView,
  'memory-program': memoryProgramView,
  cluster: clusterView
};
