// The CLI's JSON Lines contract (README, Output): one record per line. Samples:
//   {"type":"SAMPLE","event":..,"time":<exact integer ns>,"pid","tid","cpu","ip":"0x..","sym":..,
//    "period":..,"addr":"0x.." (when sampled),"callchain":["0x..",..] (when sampled),"fields":{..} (tracepoints)}
// then any other sampled field by name. Other records: "type" is the PERF_RECORD_ name without its
// prefix, then time/pid/tid/cpu, then the record's own fields.
// u64 values are written as exact JSON integer literals (bigint digits, never through a double);
// addresses are hex strings. Callchain PERF_CONTEXT_* markers are not addresses and are left out
// of "callchain"; with a symbolizer, "callchainSyms" holds the symbol of each entry (or null).

import { Misc } from '../abi/uapi';
import { decodeRecordAt, type CallchainFrame } from './record';
import type { DecodedSnapshot } from './types';

/** Resolves an address of process `pid` to `function+0xoff`; `kernel` says which address space. */
export type Symbolizer = (pid: number, ip: bigint, kernel: boolean) => string | undefined;

/** Keys whose u64 values are addresses: written as "0x.." strings. */
const ADDRESS_KEYS = new Set(['ip', 'addr', 'pgoff', 'physAddr', 'from', 'to', 'auxOffset']);

function hex(value: bigint): string {
  return `0x${BigInt.asUintN(64, value).toString(16)}`;
}

function bytesHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

/** JSON text of a value; bigint as exact digits, Uint8Array as a hex string, undefined members dropped. */
export function toJson(value: unknown, key = ''): string {
  switch (typeof value) {
    case 'bigint':
      return ADDRESS_KEYS.has(key) ? JSON.stringify(hex(value)) : value.toString();
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (value instanceof Uint8Array) return JSON.stringify(bytesHex(value));
      if (Array.isArray(value)) return `[${value.map((item) => toJson(item, key)).join(',')}]`;
      const members: string[] = [];
      for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
        if (member === undefined || typeof member === 'function') continue;
        members.push(`${JSON.stringify(name)}:${toJson(member, name)}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      return 'null';
  }
}

function isKernelAddress(ip: bigint): boolean {
  return ip >= 0xffff800000000000n;
}

/** Keys of SAMPLE fields already written in the fixed part of the line. */
const SAMPLE_FIXED_KEYS = new Set(['ip', 'pid', 'tid', 'time', 'cpu', 'period', 'addr', 'callchain', 'raw', 'tracepoint']);

/** One JSON line (without the newline) for row `row` of a decoded snapshot. */
export function formatRecordJson(snapshot: DecodedSnapshot, row: number, symbolize?: Symbolizer): string {
  const record = decodeRecordAt(snapshot, row);
  const parts: string[] = [`"type":${JSON.stringify(record.type)}`];
  if (record.event !== undefined) parts.push(`"event":${JSON.stringify(record.event)}`);
  if (record.timeNs !== undefined) parts.push(`"time":${record.timeNs.toString()}`);
  if (record.pid !== undefined) parts.push(`"pid":${record.pid}`);
  if (record.tid !== undefined) parts.push(`"tid":${record.tid}`);
  if (record.cpu !== undefined) parts.push(`"cpu":${record.cpu}`);
  const fields = record.fields;

  if (record.type === 'SAMPLE') {
    const cpumode = record.misc & Misc.CPUMODE_MASK;
    const kernelSample = cpumode === Misc.KERNEL || cpumode === Misc.GUEST_KERNEL;
    const pid = record.pid ?? -1;
    if (typeof fields.ip === 'bigint') {
      parts.push(`"ip":${JSON.stringify(hex(fields.ip))}`);
      const sym = symbolize?.(pid, fields.ip, cpumode === Misc.CPUMODE_UNKNOWN ? isKernelAddress(fields.ip) : kernelSample);
      if (sym !== undefined) parts.push(`"sym":${JSON.stringify(sym)}`);
    }
    if (typeof fields.period === 'bigint') parts.push(`"period":${fields.period.toString()}`);
    if (typeof fields.addr === 'bigint') parts.push(`"addr":${JSON.stringify(hex(fields.addr))}`);
    if (Array.isArray(fields.callchain)) {
      const frames = (fields.callchain as CallchainFrame[]).filter((frame) => !frame.isMarker);
      parts.push(`"callchain":[${frames.map((frame) => JSON.stringify(hex(frame.ip))).join(',')}]`);
      if (symbolize) {
        const syms = frames.map((frame) => {
          const kernel = frame.context === 'kernel' || frame.context === 'guest-kernel' || (frame.context === 'unknown' && isKernelAddress(frame.ip));
          const sym = symbolize(pid, frame.ip, kernel);
          return sym === undefined ? 'null' : JSON.stringify(sym);
        });
        parts.push(`"callchainSyms":[${syms.join(',')}]`);
      }
    }
    if (fields.tracepoint !== undefined) parts.push(`"fields":${toJson(fields.tracepoint)}`);
    else if (fields.raw instanceof Uint8Array) parts.push(`"raw":${JSON.stringify(bytesHex(fields.raw))}`);
    for (const [name, value] of Object.entries(fields)) {
      if (SAMPLE_FIXED_KEYS.has(name) || value === undefined) continue;
      parts.push(`${JSON.stringify(name)}:${toJson(value, name)}`);
    }
    return `{${parts.join(',')}}`;
  }

  const written = new Set(['type', 'event', ...(record.timeNs !== undefined ? ['time'] : []), 'pid', 'tid', 'cpu']);
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    // A body field that repeats the top-level value (COMM pid/tid...) is not written twice; one that differs is kept under its own name.
    if (written.has(name)) {
      const top = name === 'time' ? record.timeNs : name === 'pid' ? record.pid : name === 'tid' ? record.tid : undefined;
      if (top === value || name === 'type' || name === 'event' || name === 'cpu') continue;
      parts.push(`${JSON.stringify(`body${name[0].toUpperCase()}${name.slice(1)}`)}:${toJson(value, name)}`);
      continue;
    }
    if (name === 'callchain' && Array.isArray(value)) {
      const frames = (value as CallchainFrame[]).filter((frame) => !frame.isMarker);
      parts.push(`"callchain":[${frames.map((frame) => JSON.stringify(hex(frame.ip))).join(',')}]`);
      continue;
    }
    parts.push(`${JSON.stringify(name)}:${toJson(value, name)}`);
  }
  return `{${parts.join(',')}}`;
}

/** All rows as JSON Lines, oldest first (one string per line, no newlines). */
export function formatSnapshotJsonl(snapshot: DecodedSnapshot, symbolize?: Symbolizer): string[] {
  const lines: string[] = [];
  for (let row = 0; row < snapshot.columns.length; row++) lines.push(formatRecordJson(snapshot, row, symbolize));
  return lines;
}
