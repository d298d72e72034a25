// The decoder's public surface (pure TypeScript: runs in node and in the webview).
export * from './types';
export { DecodeError } from './errors';
export {
  computeParseInfo,
  parseInfoFor,
  idLocator,
  popcount64,
  BranchSampleFlag,
  type ParseInfo,
  type SampleLayout,
  type TrailerLayout,
  type IdLocator,
} from './parse-info';
export { walkRing, linearizeRing, type RingWalk, type LinearizedRing } from './walk';
export { decodeSnapshot } from './columns';
export type { SnapshotInput } from './assemble';
export * from './column-schema';
export {
  decodeRecordAt,
  decodeRecordBytes,
  rowSource,
  RecordCursor,
  type CallchainFrame,
  type CallchainContextName,
  type ReadBlock,
  type ReadValue,
  type BranchEntry,
  type RegsBlock,
  type SampleIdTrailer,
} from './record';
export { decodeTracepoint, type TracepointValue, type TracepointValues } from './tracepoint';
export { formatRecordJson, formatSnapshotJsonl, toJson, type Symbolizer } from './jsonl';
