import { strict as assert } from 'node:assert';
import { parseTracepointFormat, TracepointFormatError } from './tracepoint-format';

const SAMPLE = [
  'name: demo_event',
  'ID: 1234',
  'format:',
  '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;',
  '\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;',
  '\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;',
  '\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;',
  '',
  '\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;',
  '\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;',
  '\tfield:__rel_loc char[] rel;\toffset:28;\tsize:4;\tsigned:0;',
  '\tfield:const char * filename;\toffset:32;\tsize:8;\tsigned:0;',
  '\tfield:u8 saddr[4];\toffset:40;\tsize:4;\tsigned:0;',
  '\tfield:unsigned long caller[4];\toffset:48;\tsize:32;\tsigned:0;',
  '\tfield:char old_comm[TASK_COMM_LEN];\toffset:80;\tsize:16;\tsigned:1;',
  '\tfield:__data_loc u64[] addrs;\toffset:96;\tsize:4;\tsigned:0;',
  '\tfield:__data_loc cpumask_t cpumask;\toffset:100;\tsize:4;\tsigned:0;',
  '\tfield:long delta;\toffset:104;\tsize:8;\tsigned:1;',
  '',
  'print fmt: "comm=%s name=%s", REC->comm, __get_str(name)',
  '',
].join('\n');

describe('specs/tracepoint-format', () => {
  it('parses every field kind', () => {
    const format = parseTracepointFormat(SAMPLE, 'demo');
    assert.equal(format.system, 'demo');
    assert.equal(format.name, 'demo_event');
    assert.equal(format.id, 1234);
    assert.equal(format.printFormat, '"comm=%s name=%s", REC->comm, __get_str(name)');
    const byName = Object.fromEntries(format.fields.map((field) => [field.name, field]));
    assert.deepEqual(
      format.fields.map((field) => field.name),
      [
        'common_type',
        'common_flags',
        'common_preempt_count',
        'common_pid',
        'comm',
        'name',
        'rel',
        'filename',
        'saddr',
        'caller',
        'old_comm',
        'addrs',
        'cpumask',
        'delta',
      ],
    );
    assert.deepEqual(byName.common_pid, {
      name: 'common_pid',
      declaration: 'int common_pid',
      offset: 4,
      size: 4,
      signed: true,
      arrayLength: 0,
      location: 'inline',
      isString: false,
    });
    assert.deepEqual(byName.comm, {
      name: 'comm',
      declaration: 'char comm[16]',
      offset: 8,
      size: 16,
      signed: false,
      arrayLength: 16,
      location: 'inline',
      isString: true,
    });
    assert.deepEqual(byName.name, {
      name: 'name',
      declaration: '__data_loc char[] name',
      offset: 24,
      size: 4,
      signed: false,
      arrayLength: 0,
      location: 'data_loc',
      isString: true,
    });
    assert.equal(byName.rel.location, 'rel_loc');
    assert.equal(byName.rel.isString, true);
    assert.equal(byName.filename.declaration, 'const char * filename');
    assert.equal(byName.filename.isString, false, 'a user pointer is not a string we can read');
    assert.equal(byName.filename.arrayLength, 0);
    assert.equal(byName.saddr.isString, false, 'u8 arrays are bytes');
    assert.equal(byName.saddr.arrayLength, 4);
    assert.equal(byName.caller.arrayLength, 4);
    assert.equal(byName.old_comm.arrayLength, 16, 'a macro length falls back to the size for char arrays');
    assert.equal(byName.old_comm.isString, true);
    assert.equal(byName.addrs.location, 'data_loc');
    assert.equal(byName.addrs.isString, false);
    assert.deepEqual([byName.cpumask.location, byName.cpumask.isString, byName.cpumask.declaration], ['data_loc', false, '__data_loc cpumask_t cpumask']);
    assert.equal(byName.delta.signed, true);
  });

  it('tolerates old kernels without signed:', () => {
    const format = parseTracepointFormat('name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\n\nprint fmt: ""\n');
    assert.equal(format.fields[0].signed, false);
    assert.equal(format.fields[0].offset, 8);
  });

  it('throws a typed error with the line number for malformed text', () => {
    const cases: [string, RegExp][] = [
      ['ID: 1\nformat:\n', /no "name:" line/],
      ['name: x\nformat:\n', /no "ID:" line/],
      ['name: x\nID: abc\n', /line 2: ID 'abc' is not a number/],
      ['name: x\nID: 1\nformat:\n\tfield:int a;\toffset:x;\tsize:4;\tsigned:0;\n', /line 4: malformed field line/],
      ['name: x\nID: 1\nformat:\n\tfield:__data_loc name;\toffset:8;\tsize:4;\tsigned:0;\n', /line 4: malformed __data_loc field/],
      ['name: x\nID: 1\nformat:\n\tfield:__data_loc char[] name;\toffset:8;\tsize:8;\tsigned:0;\n', /is a u32, size 8/],
      ['name: x\nID: 1\nbogus line\n', /line 3: unexpected line 'bogus line'/],
    ];
    for (const [text, pattern] of cases) {
      assert.throws(
        () => parseTracepointFormat(text),
        (error: unknown) => error instanceof TracepointFormatError && pattern.test(error.message),
        text,
      );
    }
  });
});
