import * as assert from 'node:assert/strict';
import { ReadFormat, Sample } from '../abi/uapi';
import { computeParseInfo, idLocator, popcount64 } from './parse-info';
import { attrOf } from './test-records';

describe('decode/parse-info', () => {
  it('places the fixed sample fields of IP|TID|TIME|CPU|PERIOD at consecutive u64 slots after the header', () => {
    const info = computeParseInfo(attrOf(Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD));
    assert.deepEqual(
      [
        info.sample.identifier,
        info.sample.ip,
        info.sample.pidTid,
        info.sample.time,
        info.sample.addr,
        info.sample.id,
        info.sample.cpu,
        info.sample.period,
        info.sample.fixedEnd,
      ],
      [-1, 8, 16, 24, -1, -1, 32, 40, 48],
    );
    assert.equal(info.fixedSampleSize, true);
    assert.equal(info.trailer.size, 0, 'no trailer without sample_id_all');
  });

  it('puts IDENTIFIER first in samples and last in the sample_id trailer', () => {
    const info = computeParseInfo(attrOf(Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.ID | Sample.CPU, { flags: { sampleIdAll: true } }));
    assert.equal(info.sample.identifier, 8);
    assert.equal(info.sample.ip, 16);
    // trailer: TID, TIME, ID, CPU, IDENTIFIER = 5 u64
    assert.equal(info.trailer.size, 40);
    assert.equal(info.trailer.pidTidFromEnd, 40);
    assert.equal(info.trailer.timeFromEnd, 32);
    assert.equal(info.trailer.idFromEnd, 24);
    assert.equal(info.trailer.cpuFromEnd, 16);
    assert.equal(info.trailer.identifierFromEnd, 8);
    assert.deepEqual(idLocator(info), { sampleIdOffset: 8, otherIdFromEnd: 8 });
  });

  it('falls back to ID when there is no IDENTIFIER', () => {
    const info = computeParseInfo(attrOf(Sample.IP | Sample.TID | Sample.TIME | Sample.ID, { flags: { sampleIdAll: true } }));
    assert.deepEqual(idLocator(info), { sampleIdOffset: 32, otherIdFromEnd: 8 });
  });

  it('sizes read blocks, register blocks and branch options', () => {
    const info = computeParseInfo(
      attrOf(Sample.READ | Sample.REGS_USER | Sample.BRANCH_STACK, {
        readFormat: ReadFormat.TOTAL_TIME_ENABLED | ReadFormat.ID | ReadFormat.LOST,
        sampleRegsUser: 0xff0fn,
        branchSampleType: (1n << 17n) | 1n,
      }),
    );
    assert.equal(info.readSizeSingle, 32);
    assert.equal(info.readGroupEntrySize, 24);
    assert.equal(info.regsUserCount, 12);
    assert.equal(info.branchHwIndex, true);
    assert.equal(info.branchCounters, false);
    assert.equal(info.fixedSampleSize, false);
    assert.equal(popcount64(-1n), 64);
  });
});
