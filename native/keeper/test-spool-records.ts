// Records for the side-band spool's tests (native/keeper/sideband.test.ts, test/kernel/sideband-spool-full.test.ts).
import { RecordType } from '../abi/uapi';
import { header } from '../decode/test-records';

/** A 32-byte COMM-typed record whose body is `n`, so every record can be told apart. */
export const record = (n: number) => header(RecordType.COMM, 0, 32).u64(n).u64(0).u64(0).toBytes();
/** The `n` of each record in `bytes`, in order. */
export const numbers = (bytes: Uint8Array) =>
  Array.from({ length: bytes.length / 32 }, (_, i) => Number(new DataView(bytes.buffer, bytes.byteOffset + i * 32 + 8, 8).getBigUint64(0, true)));
