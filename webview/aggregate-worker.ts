// The call tree's aggregation worker (bundled on its own, then inlined into the page's bundle and started from a Blob
// URL by aggregation.ts). It keeps the store's time and stack columns and the stack table, sent once per change of the
// store, and the filter's shown-rows mask, sent once per filter; each selection query is then one typed pass over the
// rows plus the trees and counts of call-tree.ts, answered with the trees' buffers transferred.

import { selectionWeights, type CallTree } from './call-tree';
import type { AggregateAnswer, ToAggregateWorker } from './aggregation';
import { aggregateTransformed } from './call-tree-transforms';
import type { StackTable } from '../shared/stacks';

interface WorkerScope {
  onmessage: ((event: MessageEvent<ToAggregateWorker>) => void) | null;
  postMessage(message: AggregateAnswer, transfer: Transferable[]): void;
}
const scope = self as unknown as WorkerScope;

let columns: { version: number; time: Float64Array; stack: Int32Array; table: StackTable } | null = null;
let shown: { version: string; mask: Uint8Array } | null = null;
let computed = 0;

const buffersOf = (tree: CallTree): ArrayBuffer[] =>
  [tree.name, tree.parent, tree.depth, tree.self, tree.total, tree.firstChild, tree.nextSibling].map((a) => a.buffer as ArrayBuffer);

scope.onmessage = (event) => {
  const m = event.data;
  switch (m.type) {
    case 'columns':
      columns = { version: m.version, time: m.time, stack: m.stack, table: m.table };
      return;
    case 'shown':
      shown = { version: m.version, mask: m.mask };
      return;
    case 'query': {
      if (!columns || columns.version !== m.columnsVersion || (m.shownVersion !== null && shown?.version !== m.shownVersion)) {
        scope.postMessage({ type: 'answer', id: m.id, computed, error: 'the worker does not hold the data this query is about' }, []);
        return;
      }
      const weight = selectionWeights(columns.table, columns.time, columns.stack, m.range, m.shownVersion === null ? null : shown!.mask);
      const aggregate = aggregateTransformed(columns.table, weight, m.transforms);
      computed++;
      // Each tree's arrays are views of its own buffers (subarrays of the builder's): copied exact, then transferred.
      const exact = (tree: CallTree): CallTree => ({
        size: tree.size,
        name: tree.name.slice(),
        parent: tree.parent.slice(),
        depth: tree.depth.slice(),
        self: tree.self.slice(),
        total: tree.total.slice(),
        firstChild: tree.firstChild.slice(),
        nextSibling: tree.nextSibling.slice(),
      });
      const topDown = exact(aggregate.topDown);
      const bottomUp = exact(aggregate.bottomUp);
      scope.postMessage({ type: 'answer', id: m.id, computed, aggregate: { ...aggregate, topDown, bottomUp } }, [
        ...buffersOf(topDown),
        ...buffersOf(bottomUp),
      ]);
      return;
    }
  }
};
