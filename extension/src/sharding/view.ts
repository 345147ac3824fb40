// TEMPORARY scaffold (replaced by the feature helper; must not survive the issue).
import type { FeatureViewFactory } from "../common/view";
const scaffold: FeatureViewFactory = () => ({
  render(host, payload, ctx) {
    host.textContent = `${payload.kind} (scaffold)`;
    ctx.interactive();
  }
});
export const shardingView = scaffold;
