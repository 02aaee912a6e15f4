import type {PackedEnsemble} from './packed.js'
import {FALLBACK, MAX_EXACT_DIGITS, MAX_EXACT_POW10, rowsFrame} from './rows-json.js'

/**
 * The fast inference path: the packed ensemble's nodes copied into WebAssembly linear memory and
 * walked by one small, fixed WebAssembly kernel (emitted below, byte by byte, from constants in
 * this file). Same walk as packed.ts (branch-free: child = x <= threshold ? left : left + 1 as a conditional move, leaves loop on
 * themselves), same float64 comparisons, and each candidate's tree outputs are added in tree order
 * starting from the base term, so scores equal the packed ones bit for bit (property-tested).
 *
 * Why WebAssembly and not a JS function generated per model (the treelite idea): measured on 100
 * random complete depth-6 trees over 46 features, a generated nested if/else runs 50 candidates in
 * 20 µs when the same 50 rows are scored again and again (the branch predictor learns them) but in
 * 85-130 µs on fresh rows, 2x slower than the packed walk (49 µs), because every split is a branch
 * that mispredicts about a quarter of the time. The walk must stay branch-free; what JS cannot shed
 * is the bounds check and the tagging around each of the four typed-array loads per step. The
 * kernel has none (V8 guards wasm memory with guard pages), and it walks tree-major: all candidates
 * through one group of 4 trees (8 KB of nodes for depth 6, hot in L1) before the next group, where
 * the packed walk streams the whole node array (100 KB) past every pair of candidates. Measured in
 * one process: 23-25 µs for the 50 candidates against 49 µs packed (`kt bench rerank`).
 *
 * Nothing from the model file becomes code: the kernel's bytes are the same for every model (a
 * test checks it); the model only fills memory with numbers (thresholds, leaf values) and integer
 * offsets computed here from the packed ensemble's validated typed arrays. A wrong offset can only
 * trap (wasm loads are bounds-checked against the memory), never touch anything outside it.
 *
 * Memory layout (bytes, little-endian):
 *   nodes     16 B per node: f64 threshold | i32 address of the left child | i32 feature x 8
 *             (a leaf: NaN threshold, left = its own address - 16, so the step lands on itself);
 *             one extra leaf valued -0 pads the last group (x + -0 = x for every x, -0 included)
 *   values    f64 leaf value per node, at VALUES + node address / 2
 *   groups    per group of LANES trees: LANES i32 root addresses, then i32 steps (the deepest of them, >= 1)
 *   out       f64 per candidate + 1 (an odd count pairs its last candidate with itself; the extra slot takes the copy)
 *   rows      f64 candidate rows, `width` values each, back to back
 */

/** Trees walked in lock-step per group (as packed.ts). */
const LANES = 4
/** Candidates walked in lock-step (2 x 4 = 8 independent chains of loads in flight). */
const PAIR = 2
const NODE_BYTES = 16
const GROUP_BYTES = 4 * LANES + 4
/** WebAssembly's page size (core spec 2.0, section 2.5.6). */
const WASM_PAGE = 65536
/** Candidates the memory is first laid out for; it grows when a request brings more. */
const INITIAL_CAPACITY = 64
/**
 * Candidates per kernel call: tree-major order pays only while the block's rows stay in L1
 * (64 x 46 features x 8 B = 23 KB); a larger batch is scored block by block. Even, so only the
 * last block can end on an unpaired candidate (its partner slot is out[count], the spare one).
 */
const CANDIDATE_BLOCK = 64

// ---------------------------------------------------------------------------------------------
// The kernel, in the WebAssembly binary format (core spec 2.0, chapter 5).

const uleb = (n: number): number[] => {
  const out: number[] = []
  do {
    let b = n & 0x7f
    n >>>= 7
    if (n !== 0) b |= 0x80
    out.push(b)
  } while (n !== 0)
  return out
}
const sleb = (n: number): number[] => {
  const out: number[] = []
  for (;;) {
    const b = n & 0x7f
    n >>= 7
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b]
    out.push(b | 0x80)
  }
}
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()]
const name = (s: string): number[] => vec([...Buffer.from(s, 'utf8')].map((b) => [b]))
const section = (id: number, bytes: number[]): number[] => [id, ...uleb(bytes.length), ...bytes]

const T_I32 = 0x7f
const T_F64 = 0x7c
const EMPTY_BLOCK = 0x40
const T_I64 = 0x7e
const op = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  return: 0x0f,
  select: 0x1b,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Load: 0x28,
  f64Load: 0x2b,
  i32Load8U: 0x2d,
  f64Store: 0x39,
  i32Const: 0x41,
  i64Const: 0x42,
  f64Const: 0x44,
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32Ne: 0x47,
  i32LtS: 0x48,
  i32LtU: 0x49,
  i32GtS: 0x4a,
  i32GtU: 0x4b,
  i32GeS: 0x4e,
  i64Eqz: 0x50,
  f64Le: 0x65,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32Or: 0x72,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  i32LeS: 0x4c,
  i32LeU: 0x4d,
  i32GeU: 0x4f,
  i32And: 0x71,
  i32ShrS: 0x75,
  i64Eq: 0x51,
  i64LtU: 0x54,
  i64GtU: 0x56,
  i64LeU: 0x58,
  i64GeU: 0x5a,
  i64Load: 0x29,
  i64Clz: 0x79,
  i64Ctz: 0x7a,
  i64Add: 0x7c,
  i64Mul: 0x7e,
  i64And: 0x83,
  i64Or: 0x84,
  i64Xor: 0x85,
  i64Shl: 0x86,
  i64ShrU: 0x88,
  f64ReinterpretI64: 0xbf,
  i64ReinterpretF64: 0xbd,
  i32Store8: 0x3a,
  f64Eq: 0x61,
  f64Lt: 0x63,
  f64Ge: 0x66,
  i64DivU: 0x80,
  i64RemU: 0x82,
  f64Neg: 0x9a,
  f64Add: 0xa0,
  f64Sub: 0xa1,
  f64Mul: 0xa2,
  f64Div: 0xa3,
  i32WrapI64: 0xa7,
  i64ExtendI32U: 0xad,
  f64ConvertI64S: 0xb9,
  i32DivU: 0x6e,
  i32RemU: 0x70,
  i64ShrS: 0x87,
  i64Sub: 0x7d,
  i32Store: 0x36,
  i64Store: 0x37,
  f64Ne: 0x62,
} as const
/** memarg alignment exponents: 4-byte and 8-byte loads. */
const ALIGN_4 = 2
const ALIGN_8 = 3

const get = (i: number): number[] => [op.localGet, ...uleb(i)]
const set = (i: number): number[] => [op.localSet, ...uleb(i)]
const tee = (i: number): number[] => [op.localTee, ...uleb(i)]
const i32 = (n: number): number[] => [op.i32Const, ...sleb(n)]
const i32Load = (offset: number): number[] => [op.i32Load, ALIGN_4, ...uleb(offset)]
const f64Load = (offset: number): number[] => [op.f64Load, ALIGN_8, ...uleb(offset)]
const f64Store = (offset: number): number[] => [op.f64Store, ALIGN_8, ...uleb(offset)]
/** Signed LEB128 of a 64-bit constant (i64.const). */
const sleb64 = (n: bigint): number[] => {
  const out: number[] = []
  let v = BigInt.asIntN(64, n)
  for (;;) {
    const b = Number(v & 0x7fn)
    v >>= 7n
    if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) return [...out, b]
    out.push(b | 0x80)
  }
}
const i64 = (n: bigint): number[] => [op.i64Const, ...sleb64(n)]
const range = (n: number): number[] => Array.from({length: n}, (_, i) => i)

/**
 * score(rows, count, stride, out, groups, groupsEnd, values): for each group of trees, for each
 * pair of candidates, walk the group's trees to their leaves and add the leaf values to out[d] in
 * tree order. out[] holds each candidate's base term on entry. count >= 1, groupsEnd > groups.
 */
function kernelBytes(): Uint8Array {
  // parameters 0..6, then i32 locals, then f64 locals
  const P = {rows: 0, count: 1, stride: 2, out: 3, groups: 4, groupsEnd: 5, values: 6}
  const L = {d: 7, g: 8, steps: 9}
  const ptr = (c: number): number => 10 + c
  const chain = (c: number, l: number): number => 10 + PAIR + c * LANES + l
  const i32Locals = 3 + PAIR + PAIR * LANES + 1
  const sum = (c: number): number => 7 + i32Locals + c
  const left = 10 + PAIR + PAIR * LANES
  const outAddress = [...get(P.out), ...get(L.d), ...i32(3), op.i32Shl, op.i32Add]
  // node = rows[feature] <= threshold ? left : left + 16, as a select: V8 compiles it to a compare
  // and a conditional move (8 instructions a step where `left + (!(x <= t) << 4)` took 10; measured
  // 21.6 -> 19.4 µs for 50 candidates x 100 depth-6 trees). NaN compares false: right, as before.
  const step = (node: number, row: number): number[] => [
    ...get(node),
    ...i32Load(8),
    ...tee(left),
    ...get(left),
    ...i32(NODE_BYTES),
    op.i32Add,
    ...get(row),
    ...get(node),
    ...i32Load(12),
    op.i32Add,
    ...f64Load(0),
    ...get(node),
    ...f64Load(0),
    op.f64Le,
    op.select,
    ...set(node),
  ]
  const steps = range(PAIR).flatMap((c) => range(LANES).flatMap((l) => step(chain(c, l), ptr(c))))
  const addLeaf = (s: number, node: number): number[] => [
    ...get(s),
    ...get(P.values),
    ...get(node),
    ...i32(1),
    op.i32ShrU,
    op.i32Add,
    ...f64Load(0),
    op.f64Add,
    ...set(s),
  ]
  const body = [
    ...get(P.groups),
    ...set(L.g),
    op.loop,
    EMPTY_BLOCK, // groups
    ...i32(0),
    ...set(L.d),
    op.loop,
    EMPTY_BLOCK, // pairs of candidates
    ...get(P.rows),
    ...get(L.d),
    ...get(P.stride),
    op.i32Mul,
    op.i32Add,
    ...set(ptr(0)),
    // the second candidate of the pair, or the first again past the end
    ...range(PAIR - 1).flatMap((k) => [
      ...get(ptr(k)),
      ...get(P.stride),
      op.i32Add,
      ...get(ptr(k)),
      ...get(L.d),
      ...i32(k + 1),
      op.i32Add,
      ...get(P.count),
      op.i32LtS,
      op.select,
      ...set(ptr(k + 1)),
    ]),
    ...range(PAIR).flatMap((c) => [...outAddress, ...f64Load(8 * c), ...set(sum(c))]),
    ...range(LANES).flatMap((l) => [
      ...get(L.g),
      ...i32Load(4 * l),
      ...range(PAIR - 1).flatMap((c) => tee(chain(c + 1, l))),
      ...set(chain(0, l)),
    ]),
    ...get(L.g),
    ...i32Load(4 * LANES),
    ...tee(L.steps),
    // an odd step first, then two steps per iteration (half the loop's own instructions and spills:
    // 19.4 -> 18.4 µs in the same measurement)
    ...i32(1),
    op.i32And,
    op.if,
    EMPTY_BLOCK,
    ...steps,
    op.end,
    op.block,
    EMPTY_BLOCK,
    ...get(L.steps),
    ...i32(1),
    op.i32ShrU,
    ...tee(L.steps),
    op.i32Eqz,
    op.brIf,
    0,
    op.loop,
    EMPTY_BLOCK, // pairs of steps
    ...steps,
    ...steps,
    ...get(L.steps),
    ...i32(1),
    op.i32Sub,
    ...tee(L.steps),
    op.brIf,
    0,
    op.end,
    op.end,
    ...range(PAIR).flatMap((c) => range(LANES).flatMap((l) => addLeaf(sum(c), chain(c, l)))),
    ...range(PAIR).flatMap((c) => [...outAddress, ...get(sum(c)), ...f64Store(8 * c)]),
    ...get(L.d),
    ...i32(PAIR),
    op.i32Add,
    ...tee(L.d),
    ...get(P.count),
    op.i32LtS,
    op.brIf,
    0,
    op.end,
    ...get(L.g),
    ...i32(GROUP_BYTES),
    op.i32Add,
    ...tee(L.g),
    ...get(P.groupsEnd),
    op.i32LtU,
    op.brIf,
    0,
    op.end,
    op.end,
  ]
  const score = [
    ...vec([
      [...uleb(i32Locals), T_I32],
      [...uleb(PAIR), T_F64],
    ]),
    ...body,
  ]
  // read: 6 i32 parameters, then 13 i32, 12 i64 and 1 f64 locals (readerBody's V)
  const read = [
    ...vec([
      [...uleb(13), T_I32],
      [...uleb(12), T_I64],
      [...uleb(1), T_F64],
    ]),
    ...readerBody(),
  ]
  // print and answer: 5 i32 parameters, then 8 i32, 9 i64 and 1 f64 locals (printerBody's V)
  const printLocals = vec([
    [...uleb(8), T_I32],
    [...uleb(9), T_I64],
    [...uleb(1), T_F64],
  ])
  const print = [...printLocals, ...printerBody(false)]
  const answer = [...printLocals, ...printerBody(true)]
  const compact = compactReaderBody()
  const long = longReaderBody()
  const infinite = infiniteBody()
  const FUNC_TYPE = 0x60
  const IMPORT_MEMORY = 0x02
  const LIMITS_MIN_ONLY = 0x00
  const EXPORT_FUNC = 0x00
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00, // "\0asm", version 1
    ...section(
      1,
      vec([
        [FUNC_TYPE, ...vec(range(7).map(() => [T_I32])), ...vec([])], // type 0: (i32 x 7) -> ()
        [FUNC_TYPE, ...vec(range(6).map(() => [T_I32])), ...vec([[T_I32]])], // type 1: (i32 x 6) -> i32
        [FUNC_TYPE, ...vec(range(5).map(() => [T_I32])), ...vec([[T_I32]])], // type 2: (i32 x 5) -> i32
        [FUNC_TYPE, ...vec(range(8).map(() => [T_I32])), ...vec([[T_I32]])], // type 3: (i32 x 8) -> i32
        [FUNC_TYPE, ...vec(range(9).map(() => [T_I32])), ...vec([[T_I32]])], // type 4: (i32 x 9) -> i32
        [FUNC_TYPE, ...vec(range(2).map(() => [T_I32])), ...vec([[T_I32]])], // type 5: (i32 x 2) -> i32
      ]),
    ),
    ...section(2, vec([[...name('env'), ...name('memory'), IMPORT_MEMORY, LIMITS_MIN_ONLY, ...uleb(1)]])), // import env.memory
    ...section(3, vec([uleb(0), uleb(1), uleb(2), uleb(2), uleb(3), uleb(4), uleb(5)])), // functions 0..6 of types 0, 1, 2, 2, 3, 4, 5
    ...section(
      7,
      vec([
        [...name('score'), EXPORT_FUNC, ...uleb(0)],
        [...name('read'), EXPORT_FUNC, ...uleb(1)],
        [...name('print'), EXPORT_FUNC, ...uleb(2)],
        [...name('answer'), EXPORT_FUNC, ...uleb(3)],
        [...name('readCompact'), EXPORT_FUNC, ...uleb(4)],
        [...name('readLong'), EXPORT_FUNC, ...uleb(5)],
        [...name('infinite'), EXPORT_FUNC, ...uleb(6)],
      ]),
    ), // exports
    ...section(
      10,
      vec([
        [...uleb(score.length), ...score],
        [...uleb(read.length), ...read],
        [...uleb(print.length), ...print],
        [...uleb(answer.length), ...answer],
        [...uleb(compact.length), ...compact],
        [...uleb(long.length), ...long],
        [...uleb(infinite.length), ...infinite],
      ]),
    ), // code
  ])
}

/** Exponent digits beyond this value change nothing (no exact fast path that far out); keeps the i32 small. */
const EXPONENT_CAP = 10_000
const ch = (s: string): number => s.charCodeAt(0)
/** 1 when the byte `c` pushes is JSON whitespace (space, tab, newline, carriage return), else 0. */
const isWs = (c: number[]): number[] => [
  ...c,
  ...i32(ch(' ')),
  op.i32Eq,
  ...c,
  ...i32(ch('\t')),
  op.i32Sub,
  ...i32(2),
  op.i32LtU,
  op.i32Or,
  ...c,
  ...i32(ch('\r')),
  op.i32Eq,
  op.i32Or,
]
/** Advances the byte pointer in local `s` past JSON whitespace. */
const skipWhitespace = (s: number): number[] => [
  op.block,
  EMPTY_BLOCK,
  op.loop,
  EMPTY_BLOCK,
  ...isWs([...get(s), op.i32Load8U, 0, 0]),
  op.i32Eqz,
  op.brIf,
  1,
  ...get(s),
  ...i32(1),
  op.i32Add,
  ...set(s),
  op.br,
  0,
  op.end,
  op.end,
]
/** The reader's tables at its pow10 argument: 10^0..10^22 as float64, then (here) 10^0..10^8 as i64. */
const POW10_INT_OFFSET = (MAX_EXACT_POW10 + 1) * 8
const POW10_INT_MAX = 8
/** Then the 128-bit truncated powers of five of Eisel-Lemire, for decimal exponents POW5_MIN..POW5_MAX (fast_float's table). */
const POW5_OFFSET = POW10_INT_OFFSET + (POW10_INT_MAX + 1) * 8
const POW5_MIN = -342
const POW5_MAX = 308
/** Decimal exponents where an exact halfway case can occur for float64 (fast_float's binary_format<double>::min/max_exponent_round_to_even). */
const ROUND_TO_EVEN_MIN = -4
const ROUND_TO_EVEN_MAX = 23
/** Digits a u64 mantissa holds (10^19 < 2^64): longer numbers fall back to JSON.parse. */
const MAX_DIGITS_U64 = 19

let pow5Table: BigUint64Array | undefined
/**
 * 5^q for q in POW5_MIN..POW5_MAX as 128 bits, high word first: for q >= 0 the leading 128 bits of
 * 5^q, truncated; for q < 0 2^b / 5^-q + 1 scaled to 128 bits (fast_float's table_generation.py).
 */
function powersOfFive(): BigUint64Array {
  if (pow5Table) return pow5Table
  const table = new BigUint64Array(2 * (POW5_MAX - POW5_MIN + 1))
  const top = 1n << 128n
  for (let q = POW5_MIN; q <= POW5_MAX; q++) {
    let p: bigint
    if (q >= 0) {
      p = 5n ** BigInt(q)
      while (p < top >> 1n) p <<= 1n
      while (p >= top) p >>= 1n
    } else {
      const power5 = 5n ** BigInt(-q)
      let z = 0n
      while (1n << z < power5) z++
      if (q >= -27) p = (1n << (z + 127n)) / power5 + 1n
      else {
        p = (1n << (2n * z + 128n)) / power5 + 1n
        while (p >= top) p >>= 1n
      }
    }
    table[2 * (q - POW5_MIN)] = p >> 64n
    table[2 * (q - POW5_MIN) + 1] = p & ((1n << 64n) - 1n)
  }
  return (pow5Table = table)
}
const f64Bytes = (v: number): number[] => [...new Uint8Array(Float64Array.of(v).buffer)]

/**
 * read(at, last, out, width, maxRows, pow10) -> rows, or -1: the rows of `{"features": [...]}`
 * from the byte after the outer `[` (at) to the closing brace (last, checked by the caller), into
 * out as float64. The grammar and the exactness rule are rows-json.ts's (readFeatureRows, its JS
 * twin and reference): JSON whitespace, numbers or null, `width` values a row; a number of at
 * most 15 significant digits and a decimal exponent within +-22 is one correctly rounded multiply
 * or divide of exact operands (Clinger's fast path, as the JS twin), one of up to 19 significant
 * digits and a normal float64 result goes through Eisel-Lemire (which the JS twin leaves to
 * JSON.parse); anything else -1. Every scan stops at the closing brace at the latest.
 */
function readerBody(): number[] {
  const P = {i: 0, last: 1, out: 2, width: 3, maxRows: 4, pow: 5}
  const V = {
    c: 6,
    f: 7,
    rows: 8,
    neg: 9,
    digits: 10,
    exp: 11,
    e: 12,
    eneg: 13,
    k: 14,
    lz: 15,
    upper: 16,
    shift: 17,
    power2: 18,
    mant: 19,
    v: 20,
    x: 21,
    w: 22,
    t: 23,
    hi: 24,
    lo: 25,
    ad: 26,
    bd: 27,
    adbc: 28,
    second: 29,
    m: 30,
    value: 31,
  }
  const fail = [...i32(-1), op.return]
  const failIf = (cond: number[]): number[] => [...cond, op.if, EMPTY_BLOCK, ...fail, op.end]
  const loadC = [...get(P.i), op.i32Load8U, 0, 0, ...set(V.c)]
  const inc = [...get(P.i), ...i32(1), op.i32Add, ...set(P.i)]
  const notDigit = [...get(V.c), ...i32(ch('0')), op.i32Sub, ...i32(9), op.i32GtU]
  const is = (v: number, c: string): number[] => [...get(v), ...i32(ch(c)), op.i32Eq]
  const isNot = (v: number, c: string): number[] => [...get(v), ...i32(ch(c)), op.i32Ne]
  // c = body[i]; while c is JSON whitespace (space, \t, \n, \r): i++
  // (most bodies have no whitespace: one comparison decides that)
  const skipWs = [
    ...loadC,
    ...get(V.c),
    ...i32(ch(' ')),
    op.i32LeU,
    op.if,
    EMPTY_BLOCK,
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(P.i),
    op.i32Load8U,
    0,
    0,
    ...tee(V.c),
    ...i32(ch(' ')),
    op.i32Eq,
    ...get(V.c),
    ...i32(ch('\t')),
    op.i32Sub,
    ...i32(2),
    op.i32LtU,
    op.i32Or,
    ...get(V.c),
    ...i32(ch('\r')),
    op.i32Eq,
    op.i32Or,
    op.i32Eqz,
    op.brIf,
    1,
    ...inc,
    op.br,
    0,
    op.end,
    op.end,
    op.end,
  ]
  // A run of digits, up to 8 at a time (SWAR, as simdjson's parse_eight_digits_unrolled): load 8
  // bytes, find how many leading ones are digits (k), move them to the low-order end padded with
  // '0's, and combine them pairwise with three multiplies. mant = mant x 10^k + those digits.
  const BYTES = (b: number): bigint => BigInt(b) * 0x0101010101010101n
  const run = (fraction: boolean): number[] => [
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(P.i),
    op.i64Load,
    0,
    0,
    ...set(V.v),
    // a byte is a digit when its high nibble is 3, and still 3 after adding 6 (0x30..0x39 only)
    ...get(V.v),
    ...i64(BYTES(0xf0)),
    op.i64And,
    ...i64(BYTES(0x30)),
    op.i64Xor,
    ...get(V.v),
    ...i64(BYTES(0x06)),
    op.i64Add,
    ...i64(BYTES(0xf0)),
    op.i64And,
    ...i64(BYTES(0x30)),
    op.i64Xor,
    op.i64Or,
    op.i64Ctz,
    op.i32WrapI64,
    ...i32(3),
    op.i32ShrU,
    ...tee(V.k),
    op.i32Eqz,
    op.brIf,
    1,
    ...get(V.v),
    ...i32(8),
    ...get(V.k),
    op.i32Sub,
    ...i32(3),
    op.i32Shl,
    op.i64ExtendI32U,
    op.i64Shl,
    ...i64(BYTES(0x30)),
    ...get(V.k),
    ...i32(3),
    op.i32Shl,
    op.i64ExtendI32U,
    op.i64ShrU,
    op.i64Or,
    ...i64(BYTES(0x0f)),
    op.i64And,
    ...i64(2561n),
    op.i64Mul,
    ...i64(8n),
    op.i64ShrU,
    ...i64(0x00ff00ff00ff00ffn),
    op.i64And,
    ...i64(6553601n),
    op.i64Mul,
    ...i64(16n),
    op.i64ShrU,
    ...i64(0x0000ffff0000ffffn),
    op.i64And,
    ...i64(42949672960001n),
    op.i64Mul,
    ...i64(32n),
    op.i64ShrU,
    ...set(V.x),
    // significant digits: leading zeros of a fraction after a zero integer part do not count
    // (while mant is 0, the run's leading '0' bytes are skipped: ctz of v ^ '00000000', at most k)
    ...get(V.digits),
    ...get(V.k),
    op.i32Add,
    ...(fraction
      ? [
          ...get(V.v),
          ...i64(BYTES(0x30)),
          op.i64Xor,
          op.i64Ctz,
          op.i32WrapI64,
          ...i32(3),
          op.i32ShrU,
          ...i32(0),
          ...get(V.mant),
          op.i64Eqz,
          op.select,
          op.i32Sub,
        ]
      : []),
    ...set(V.digits),
    ...get(V.mant),
    ...get(P.pow),
    ...get(V.k),
    ...i32(3),
    op.i32Shl,
    op.i32Add,
    op.i64Load,
    ALIGN_8,
    ...uleb(POW10_INT_OFFSET),
    op.i64Mul,
    ...get(V.x),
    op.i64Add,
    ...set(V.mant),
    ...get(P.i),
    ...get(V.k),
    op.i32Add,
    ...set(P.i),
    ...(fraction ? [...get(V.exp), ...get(V.k), op.i32Sub, ...set(V.exp)] : []),
    ...get(V.k),
    ...i32(8),
    op.i32Eq,
    op.brIf,
    0,
    op.end,
    op.end,
    ...loadC,
  ]
  const power = [...get(P.pow), op.i32Add, op.f64Load, ALIGN_8, 0]
  const eiselLemire = eiselLemireCode(V, P.pow, failIf)
  const value = [
    ...is(V.c, 'n'),
    op.if,
    EMPTY_BLOCK,
    ...failIf([
      ...get(P.i),
      op.i32Load8U,
      0,
      1,
      ...i32(ch('u')),
      op.i32Ne,
      ...get(P.i),
      op.i32Load8U,
      0,
      2,
      ...i32(ch('l')),
      op.i32Ne,
      op.i32Or,
      ...get(P.i),
      op.i32Load8U,
      0,
      3,
      ...i32(ch('l')),
      op.i32Ne,
      op.i32Or,
    ]),
    ...get(P.i),
    ...i32(4),
    op.i32Add,
    ...set(P.i),
    op.f64Const,
    ...f64Bytes(Number.NaN),
    ...set(V.value),
    op.else,
    ...is(V.c, '-'),
    ...tee(V.neg),
    op.if,
    EMPTY_BLOCK,
    ...inc,
    ...loadC,
    op.end,
    ...failIf(notDigit),
    op.i64Const,
    0,
    ...set(V.mant),
    ...i32(0),
    ...set(V.digits),
    ...i32(0),
    ...set(V.exp),
    ...is(V.c, '0'),
    op.if,
    EMPTY_BLOCK,
    // JSON: a leading 0 stands alone
    ...inc,
    ...loadC,
    ...failIf([...notDigit, op.i32Eqz]),
    op.else,
    ...run(false),
    op.end,
    ...is(V.c, '.'),
    op.if,
    EMPTY_BLOCK,
    ...inc,
    ...loadC,
    ...failIf(notDigit),
    ...run(true),
    op.end,
    // 'e' or 'E'
    ...get(V.c),
    ...i32(0x20),
    op.i32Or,
    ...i32(ch('e')),
    op.i32Eq,
    op.if,
    EMPTY_BLOCK,
    ...inc,
    ...loadC,
    ...is(V.c, '-'),
    ...set(V.eneg),
    ...is(V.c, '-'),
    ...is(V.c, '+'),
    op.i32Or,
    op.if,
    EMPTY_BLOCK,
    ...inc,
    ...loadC,
    op.end,
    ...failIf(notDigit),
    ...i32(0),
    ...set(V.e),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...notDigit,
    op.brIf,
    1,
    ...get(V.e),
    ...i32(10),
    op.i32Mul,
    ...get(V.c),
    ...i32(ch('0')),
    op.i32Sub,
    op.i32Add,
    ...get(V.e),
    ...get(V.e),
    ...i32(EXPONENT_CAP),
    op.i32LtS,
    op.select,
    ...set(V.e),
    ...inc,
    ...loadC,
    op.br,
    0,
    op.end,
    op.end,
    ...get(V.exp),
    ...i32(0),
    ...get(V.e),
    op.i32Sub,
    ...get(V.e),
    ...get(V.eneg),
    op.select,
    op.i32Add,
    ...set(V.exp),
    op.end,
    // more digits than a u64 holds: mant has wrapped, and there is no fast path anyway
    ...failIf([...get(V.digits), ...i32(MAX_DIGITS_U64), op.i32GtS]),
    ...get(V.mant),
    op.i64Eqz,
    op.if,
    EMPTY_BLOCK,
    op.f64Const,
    ...f64Bytes(0),
    ...set(V.value),
    op.else,
    // Clinger's fast path: at most 15 digits and |exp| <= 22
    // (exp + 22 <= 44 unsigned: -22 <= exp <= 22 in one comparison)
    ...get(V.digits),
    ...i32(MAX_EXACT_DIGITS),
    op.i32LeS,
    ...get(V.exp),
    ...i32(MAX_EXACT_POW10),
    op.i32Add,
    ...i32(2 * MAX_EXACT_POW10),
    op.i32LeU,
    op.i32And,
    op.if,
    EMPTY_BLOCK,
    ...get(V.exp),
    ...i32(0),
    op.i32GeS,
    op.if,
    EMPTY_BLOCK,
    ...get(V.mant),
    op.f64ConvertI64S,
    ...get(V.exp),
    ...i32(3),
    op.i32Shl,
    ...power,
    op.f64Mul,
    ...set(V.value),
    op.else,
    ...get(V.mant),
    op.f64ConvertI64S,
    ...i32(0),
    ...get(V.exp),
    op.i32Sub,
    ...i32(3),
    op.i32Shl,
    ...power,
    op.f64Div,
    ...set(V.value),
    op.end,
    op.else,
    ...eiselLemire,
    op.end,
    op.end,
    ...get(V.neg),
    op.if,
    EMPTY_BLOCK,
    ...get(V.value),
    op.f64Neg,
    ...set(V.value),
    op.end,
    op.end,
    ...get(P.out),
    ...get(V.value),
    ...f64Store(0),
    ...get(P.out),
    ...i32(8),
    op.i32Add,
    ...set(P.out),
  ]
  const row = [
    ...i32(0),
    ...set(V.f),
    op.loop,
    EMPTY_BLOCK,
    ...skipWs,
    ...value,
    ...skipWs,
    ...inc,
    ...get(V.f),
    ...i32(1),
    op.i32Add,
    ...tee(V.f),
    ...get(P.width),
    op.i32LtS,
    op.if,
    EMPTY_BLOCK,
    ...failIf(isNot(V.c, ',')),
    op.br,
    1,
    op.end,
    ...failIf(isNot(V.c, ']')),
    op.end,
  ]
  return [
    ...i32(0),
    ...set(V.rows),
    op.loop,
    EMPTY_BLOCK,
    ...skipWs,
    ...failIf(isNot(V.c, '[')),
    ...inc,
    ...failIf([...get(V.rows), ...get(P.maxRows), op.i32GeS]),
    ...row,
    ...get(V.rows),
    ...i32(1),
    op.i32Add,
    ...set(V.rows),
    ...skipWs,
    ...inc,
    ...is(V.c, ','),
    op.brIf,
    0,
    ...failIf(isNot(V.c, ']')),
    op.end,
    ...skipWs,
    ...get(V.rows),
    ...i32(-1),
    ...get(P.i),
    ...get(P.last),
    op.i32Eq,
    op.select,
    op.end,
  ]
}

/** The locals Eisel-Lemire works in: mant and exp in, value out, the rest scratch (i32: exp, lz, upper, shift, power2; f64: value; i64 the others). */
interface EiselLemireLocals {
  exp: number
  mant: number
  lz: number
  w: number
  t: number
  hi: number
  lo: number
  ad: number
  bd: number
  adbc: number
  second: number
  m: number
  upper: number
  shift: number
  power2: number
  value: number
}

/**
 * value = mant x 10^exp correctly rounded, for 1 <= mant < 10^19 (exact: at most 19 digits): the
 * code of Eisel-Lemire (Lemire 2021, "Number parsing at a gigabyte per second", section 5; as
 * fast_float's compute_float for float64, whose second product and round-to-even test it follows),
 * with the 128-bit truncated powers of five at `pow` + POW5_OFFSET (powersOfFive()). `failIf(cond)`
 * is run where it cannot give the double: exp outside POW5_MIN..POW5_MAX, a subnormal or an
 * infinite result (the caller falls back to an exact path).
 */
function eiselLemireCode(V: EiselLemireLocals, pow: number, failIf: (cond: number[]) => number[]): number[] {
  // 64 x 64 -> 128-bit product (hi:lo) of two i64 locals: lo is i64.mul's wrapped product; hi from
  // 32-bit halves with the carries folded into the sums (Hacker's Delight 8-2, mulhu), no carry
  // compares: t = al bl, u = ah bl + t >> 32, v = al bh + (u & M), hi = ah bh + u >> 32 + v >> 32
  // (neither sum can overflow: (2^32 - 1)^2 + 2^32 - 1 < 2^64). 18 x64 instructions where fast_float's
  // umul128_generic with its two carry compares took about 30 (V8's code for this function).
  const M32 = [...i64(0xffffffffn), op.i64And]
  const mul128 = (a: number, b: number, hi: number, lo: number): number[] => [
    ...get(a),
    ...get(b),
    op.i64Mul,
    ...set(lo),
    ...get(a),
    ...M32,
    ...get(b),
    ...M32,
    op.i64Mul,
    ...set(V.bd),
    ...get(a),
    ...i64(32n),
    op.i64ShrU,
    ...get(b),
    ...M32,
    op.i64Mul,
    ...get(V.bd),
    ...i64(32n),
    op.i64ShrU,
    op.i64Add,
    ...set(V.ad),
    ...get(a),
    ...M32,
    ...get(b),
    ...i64(32n),
    op.i64ShrU,
    op.i64Mul,
    ...get(V.ad),
    ...M32,
    op.i64Add,
    ...set(V.adbc),
    ...get(a),
    ...i64(32n),
    op.i64ShrU,
    ...get(b),
    ...i64(32n),
    op.i64ShrU,
    op.i64Mul,
    ...get(V.ad),
    ...i64(32n),
    op.i64ShrU,
    op.i64Add,
    ...get(V.adbc),
    ...i64(32n),
    op.i64ShrU,
    op.i64Add,
    ...set(hi),
  ]
  // Eisel-Lemire (Lemire 2021, "Number parsing at a gigabyte per second", as fast_float's
  // compute_float for float64): mant x 10^exp, mant < 10^19, correctly rounded, from the 128-bit
  // truncated power of five; subnormal or infinite results fall back (-1).
  return [
    ...failIf([...get(V.exp), ...i32(POW5_MIN), op.i32LtS, ...get(V.exp), ...i32(POW5_MAX), op.i32GtS, op.i32Or]),
    ...get(V.mant),
    op.i64Clz,
    op.i32WrapI64,
    ...set(V.lz),
    ...get(V.mant),
    ...get(V.lz),
    op.i64ExtendI32U,
    op.i64Shl,
    ...set(V.w),
    // the table entry of exp: high 64 bits at +0, low at +8
    ...get(pow),
    ...get(V.exp),
    ...i32(-POW5_MIN),
    op.i32Add,
    ...i32(4),
    op.i32Shl,
    op.i32Add,
    op.i64Load,
    ALIGN_8,
    ...uleb(POW5_OFFSET),
    ...set(V.t),
    ...mul128(V.w, V.t, V.hi, V.lo),
    ...get(V.hi),
    ...i64(0x1ffn),
    op.i64And,
    ...i64(0x1ffn),
    op.i64Eq,
    op.if,
    EMPTY_BLOCK,
    ...get(pow),
    ...get(V.exp),
    ...i32(-POW5_MIN),
    op.i32Add,
    ...i32(4),
    op.i32Shl,
    op.i32Add,
    op.i64Load,
    ALIGN_8,
    ...uleb(POW5_OFFSET + 8),
    ...set(V.t),
    ...mul128(V.w, V.t, V.second, V.m),
    ...get(V.lo),
    ...get(V.second),
    op.i64Add,
    ...set(V.lo),
    ...get(V.second),
    ...get(V.lo),
    op.i64GtU,
    op.if,
    EMPTY_BLOCK,
    ...get(V.hi),
    ...i64(1n),
    op.i64Add,
    ...set(V.hi),
    op.end,
    op.end,
    ...get(V.hi),
    ...i64(63n),
    op.i64ShrU,
    op.i32WrapI64,
    ...set(V.upper),
    ...get(V.upper),
    ...i32(64 - 52 - 3),
    op.i32Add,
    ...set(V.shift),
    ...get(V.hi),
    ...get(V.shift),
    op.i64ExtendI32U,
    op.i64ShrU,
    ...set(V.m),
    // power2 = floor(exp x log2(10)) + 63 + upper - lz + 1023 (fast_float's detail::power)
    ...i32(152170 + 65536),
    ...get(V.exp),
    op.i32Mul,
    ...i32(16),
    op.i32ShrS,
    ...i32(63),
    op.i32Add,
    ...get(V.upper),
    op.i32Add,
    ...get(V.lz),
    op.i32Sub,
    ...i32(1023),
    op.i32Add,
    ...set(V.power2),
    ...failIf([...get(V.power2), ...i32(0), op.i32LeS]),
    // exactly halfway between two doubles: round to even (only where 5^exp fits 64 bits: fast_float's
    // min/max_exponent_round_to_even, -4 and 23; the range test first, one unsigned comparison)
    ...get(V.exp),
    ...i32(-ROUND_TO_EVEN_MIN),
    op.i32Add,
    ...i32(ROUND_TO_EVEN_MAX - ROUND_TO_EVEN_MIN),
    op.i32LeU,
    op.if,
    EMPTY_BLOCK,
    ...get(V.lo),
    ...i64(1n),
    op.i64LeU,
    ...get(V.m),
    ...i64(3n),
    op.i64And,
    ...i64(1n),
    op.i64Eq,
    op.i32And,
    op.if,
    EMPTY_BLOCK,
    ...get(V.m),
    ...get(V.shift),
    op.i64ExtendI32U,
    op.i64Shl,
    ...get(V.hi),
    op.i64Eq,
    op.if,
    EMPTY_BLOCK,
    ...get(V.m),
    ...i64(-2n),
    op.i64And,
    ...set(V.m),
    op.end,
    op.end,
    op.end,
    ...get(V.m),
    ...get(V.m),
    ...i64(1n),
    op.i64And,
    op.i64Add,
    ...i64(1n),
    op.i64ShrU,
    ...set(V.m),
    ...get(V.m),
    ...i64(2n << 52n),
    op.i64GeU,
    op.if,
    EMPTY_BLOCK,
    ...i64(1n << 52n),
    ...set(V.m),
    ...get(V.power2),
    ...i32(1),
    op.i32Add,
    ...set(V.power2),
    op.end,
    ...failIf([...get(V.power2), ...i32(0x7ff), op.i32GeS]),
    ...get(V.m),
    ...i64(~(1n << 52n)),
    op.i64And,
    ...get(V.power2),
    op.i64ExtendI32U,
    ...i64(52n),
    op.i64Shl,
    op.i64Or,
    op.f64ReinterpretI64,
    ...set(V.value),
  ]
}

// ---------------------------------------------------------------------------------------------
// The compact-form rows reader: two passes with WebAssembly SIMD (128-bit), no scan chain.

/** WebAssembly SIMD128 (core spec 2.0, section 5.4.8): the 0xFD prefix, then the opcode as LEB128. */
const T_V128 = 0x7b
const simd = {
  load: 0x00,
  store: 0x0b,
  const: 0x0c,
  shuffle: 0x0d,
  swizzle: 0x0e,
  i8x16Splat: 0x0f,
  i8x16ExtractLaneU: 0x16,
  i32x4ExtractLane: 0x1b,
  i8x16Eq: 0x23,
  v128And: 0x4e,
  v128Or: 0x50,
  load64Lane: 0x57,
  load64Zero: 0x5d,
  i8x16AllTrue: 0x63,
  i8x16Bitmask: 0x64,
  i8x16Sub: 0x71,
  i8x16MinU: 0x77,
  i16x8NarrowI32x4U: 0x86,
  i16x8ExtendLowI8x16U: 0x89,
  i16x8ExtendHighI8x16U: 0x8a,
  i32x4DotI16x8S: 0xba,
  f64x2Div: 0xf3,
  f64x2ConvertLowI32x4S: 0xfe,
} as const
const vop = (opcode: number): number[] => [0xfd, ...uleb(opcode)]
/** Core opcodes only the compact reader uses. */
const opc = {i32Store: 0x36, i32Ctz: 0x68, i32DivU: 0x6e, i32Xor: 0x73, i64Popcnt: 0x7b, i64Sub: 0x7d} as const

/**
 * The SIMD rows readers' row bookkeeping (compact and long readers alike), on their locals: the
 * separator tape pointer j, a separator's position e, the read position s, the error flag err,
 * rows left r, and the tape's end tp, its length cnt and the row count rows.
 */
interface RowLocals {
  readonly j: number
  readonly e: number
  readonly s: number
  readonly err: number
  readonly r: number
  readonly tp: number
  readonly cnt: number
  readonly rows: number
}

/** A row's end: its ']' where the tape says, then a ',' right after it, or ']' after the last row (err set otherwise). */
const rowEnd = (V: RowLocals): number[] => [
  ...get(V.j),
  ...i32Load(0),
  ...tee(V.e),
  ...get(V.s),
  op.i32Ne,
  ...get(V.err),
  op.i32Or,
  ...set(V.err),
  ...get(V.j),
  ...i32(4),
  op.i32Add,
  ...set(V.j),
  ...get(V.r),
  ...i32(1),
  op.i32Sub,
  ...set(V.r),
  ...get(V.err),
  ...get(V.e),
  op.i32Load8U,
  0,
  0,
  ...i32(ch(',')),
  ...i32(ch(']')),
  ...get(V.r),
  op.select,
  op.i32Ne,
  op.i32Or,
  ...set(V.err),
  ...get(V.e),
  ...i32(1),
  op.i32Add,
  ...set(V.s),
]

/**
 * The rows the separator tape holds (width separators and a ']' per row, 4 bytes each), kept in
 * V.rows; pushes 1 unless that is 1 to maxRows whole rows.
 */
const rowsFromTape = (
  V: RowLocals,
  P: {readonly tape: number; readonly width: number; readonly maxRows: number},
): number[] => [
  ...get(V.tp),
  ...get(P.tape),
  op.i32Sub,
  ...i32(2),
  op.i32ShrU,
  ...tee(V.cnt),
  ...get(P.width),
  ...i32(1),
  op.i32Add,
  opc.i32DivU,
  ...tee(V.rows),
  op.i32Eqz,
  ...get(V.rows),
  ...get(P.maxRows),
  op.i32GtS,
  op.i32Or,
  ...get(V.rows),
  ...get(P.width),
  ...i32(1),
  op.i32Add,
  op.i32Mul,
  ...get(V.cnt),
  op.i32Ne,
  op.i32Or,
]
const v128Load = (offset: number): number[] => [...vop(simd.load), 0, ...uleb(offset)]
const i16x8Const = (lanes: number[]): number[] => [...vop(simd.const), ...new Uint8Array(Int16Array.from(lanes).buffer)]

/**
 * The compact reader's value table: one entry per (n, d, minus), n the value's length in bytes
 * (0..15), d its first '.' among the 16 bytes loaded from its start (16 when none) and minus
 * whether it starts with '-'. An entry holds the byte shuffle that right-aligns the value's digits
 * (lane 15 the last; the sign, the point and what precedes the digits become 0), what each of
 * the value's bytes must be (byte - base <= limit, unsigned: a digit, a first digit that is not
 * '0' when more follow, the '.', the '-'), the divisor +-10^(digits after the point) (the sign of
 * the value: an exact division by a negative power of ten, -0 included), and whether the digits
 * fit 8 lanes. A length and point that make no JSON number (no digit before or after the point)
 * demand a digit where the value has its '.' or '-', so that no value passes.
 */
const FAST_LENGTH_MAX = 15
const FAST_ENTRY_BYTES = 64
const FAST_ENTRY = {shuffle: 0, base: 16, limit: 32, divisor: 48, narrow: 56} as const
const FAST_POINT_NONE = 16
/** The table's second half: the same entries for a row's last value, whose separator must be ']' (',' in the first). */
const FAST_LAST_HALF = (FAST_POINT_NONE + 1) * (FAST_LENGTH_MAX + 1) * 2 * FAST_ENTRY_BYTES
const FAST_TABLE_BYTES = 2 * FAST_LAST_HALF
/** Bytes past the body the compact reader may load (its last 64-byte block, a value's 16 bytes); their content does not matter. */
export const FAST_BODY_SLACK = 64
/** Separators the index pass writes per 64-byte block before looping for more (a block of 8-byte values has 8). */
const FAST_WRITES = 8
/** The compact reader's answer when the body is not in its form (the general reader then reads it). */
export const NOT_COMPACT = -2

function fastTable(): Uint8Array {
  const table = new Uint8Array(FAST_TABLE_BYTES)
  const view = new DataView(table.buffer)
  for (const [half, separator] of [
    [0, ','],
    [FAST_LAST_HALF, ']'],
  ] as const) {
    for (let d = 0; d <= FAST_POINT_NONE; d++) {
      for (let n = 0; n <= FAST_LENGTH_MAX; n++) {
        for (let minus = 0; minus <= 1; minus++) {
          const at = half + ((d * (FAST_LENGTH_MAX + 1) + n) * 2 + minus) * FAST_ENTRY_BYTES
          const point = d < n
          const intDigits = (point ? d : n) - minus
          const fracDigits = point ? n - 1 - d : 0
          const valid = intDigits >= 1 && (!point || fracDigits >= 1)
          for (let lane = 0; lane < 16; lane++) {
            let src = n - 1 - (15 - lane)
            if (point && src <= d) src--
            table[at + FAST_ENTRY.shuffle + lane] = src >= minus ? src : 0x80
            // what byte `lane` must be: a digit, except the sign and the point; then the separator; anything past it
            let base = 0
            let limit = 0xff
            if (lane === n) [base, limit] = [ch(separator), 0]
            if (lane < n) {
              ;[base, limit] = [ch('0'), 9]
              if (valid && lane === 0 && minus) [base, limit] = [ch('-'), 0]
              else if (valid && point && lane === d) [base, limit] = [ch('.'), 0]
              else if (valid && lane === minus && intDigits > 1) [base, limit] = [ch('1'), 8]
            }
            table[at + FAST_ENTRY.base + lane] = base
            table[at + FAST_ENTRY.limit + lane] = limit
          }
          view.setFloat64(at + FAST_ENTRY.divisor, (minus ? -1 : 1) * 10 ** fracDigits, true)
          view.setUint32(at + FAST_ENTRY.narrow, intDigits + fracDigits <= 8 ? 1 : 0, true)
        }
      }
    }
  }
  return table
}

/**
 * Pass 1 of the SIMD readers (readCompact, readLong): every ',' and ']' of [at, last) found 64
 * bytes at a time (compares and bitmasks), their positions written to `tape` (tp ends past the last).
 * The arguments are the indices of the locals it uses (v128: v, comma, close as ',' and ']' splats).
 */
function separatorIndex(L: {
  at: number
  last: number
  tape: number
  p: number
  tp: number
  cnt: number
  k: number
  M: number
  v: number
  comma: number
  close: number
}): number[] {
  const {at, last, tape, p, tp, cnt, M, v, comma, close} = L
  const bits = (k: number): number[] => [op.i64ExtendI32U, ...(k === 0 ? [] : [...i64(BigInt(16 * k)), op.i64Shl])]
  // the separators of one 16-byte block as bits of M
  const block = (k: number): number[] => [
    ...get(p),
    ...v128Load(16 * k),
    ...tee(v),
    ...get(comma),
    ...vop(simd.i8x16Eq),
    ...get(v),
    ...get(close),
    ...vop(simd.i8x16Eq),
    ...vop(simd.v128Or),
    ...vop(simd.i8x16Bitmask),
    ...bits(k),
    ...(k === 0 ? [] : [...get(M), op.i64Or]),
    ...set(M),
  ]
  const writeOne = (offset: number[]): number[] => [
    ...offset,
    ...get(p),
    ...get(M),
    op.i64Ctz,
    op.i32WrapI64,
    op.i32Add,
    opc.i32Store,
    ALIGN_4,
    0,
    ...get(M),
    ...get(M),
    ...i64(1n),
    opc.i64Sub,
    op.i64And,
    ...set(M),
  ]
  const tail = (mask: number): number[] => [
    ...get(mask),
    ...i64(1n),
    ...get(L.k),
    op.i64ExtendI32U,
    op.i64Shl,
    ...i64(1n),
    opc.i64Sub,
    op.i64And,
    ...set(mask),
  ]
  return [
    ...get(at),
    ...set(p),
    ...get(tape),
    ...set(tp),
    op.loop,
    EMPTY_BLOCK,
    ...block(0),
    ...block(1),
    ...block(2),
    ...block(3),
    // bytes from `last` on are not the body's rows
    ...get(last),
    ...get(p),
    op.i32Sub,
    ...tee(L.k),
    ...i32(64),
    op.i32LtU,
    op.if,
    EMPTY_BLOCK,
    ...tail(M),
    op.end,
    ...get(M),
    opc.i64Popcnt,
    op.i32WrapI64,
    ...set(cnt),
    ...range(FAST_WRITES).flatMap((k) => writeOne([...get(tp), ...i32(4 * k), op.i32Add])),
    ...get(cnt),
    ...i32(FAST_WRITES),
    op.i32GtU,
    op.if,
    EMPTY_BLOCK,
    ...get(tp),
    ...i32(4 * FAST_WRITES),
    op.i32Add,
    ...set(L.k),
    op.loop,
    EMPTY_BLOCK,
    ...writeOne(get(L.k)),
    ...get(L.k),
    ...i32(4),
    op.i32Add,
    ...set(L.k),
    ...get(M),
    op.i64Eqz,
    op.i32Eqz,
    op.brIf,
    0,
    op.end,
    op.end,
    ...get(tp),
    ...get(cnt),
    ...i32(2),
    op.i32Shl,
    op.i32Add,
    ...set(tp),
    ...get(p),
    ...i32(64),
    op.i32Add,
    ...tee(p),
    ...get(last),
    op.i32LtU,
    op.brIf,
    0,
    op.end,
  ]
}

/**
 * readCompact(at, last, out, width, maxRows, table, tape) -> rows, or NOT_COMPACT: the rows of
 * `{"features": [...]}` in the form JSON.stringify prints them (no whitespace, every value a
 * number of at most 15 bytes, no exponent), read without a chain of dependent loads (the general
 * reader finds each value's end from the previous one's, about 17 cycles a value).
 * Pass 1 finds every ',' and ']' of [at, last) 64 bytes at a time (SIMD compares and bitmasks),
 * writes their positions to `tape` and counts the ']'. The count alone fixes the rows (width + 1
 * separators a row), and rows + 1 ']' at the places a row and the rows end leave only ',' elsewhere.
 * Pass 2 checks each row's frame and reads every value on its own (its start and end are known):
 * its 16 bytes checked lane by lane against the table entry of (length, point, sign), minus '0',
 * the digits shuffled into place, three multiply-add steps (i32x4.dot_i16x8_s) to an integer below
 * 10^15, two values at once when both have at most 8 digits, then one correctly rounded division
 * by an exact power of ten (Clinger's fast path, as the general reader). Whatever breaks the form
 * (whitespace, null, an exponent, a longer number, any syntax error) returns NOT_COMPACT and the
 * general reader (read) reads the body, with its fallbacks and errors.
 */
/**
 * A row's start in the SIMD readers: JSON whitespace when `ws`, its '[' (else the reader's error
 * flag, through errIf), then `s` past it and the row's value count (`width`) in `f`.
 */
function rowStart(
  ws: boolean,
  l: {readonly s: number; readonly f: number; readonly width: number},
  errIf: (cond: number[]) => number[],
): number[] {
  return [
    ...(ws ? skipWhitespace(l.s) : []),
    ...errIf([...get(l.s), op.i32Load8U, 0, 0, ...i32(ch('[')), op.i32Ne]),
    ...get(l.s),
    ...i32(1),
    op.i32Add,
    ...set(l.s),
    ...get(l.width),
    ...set(l.f),
  ]
}

/** A v128 local set to one byte in every lane (i8x16.splat). */
const splatByte = (local: number, byte: number): number[] => [...i32(byte), ...vop(simd.i8x16Splat), ...set(local)]

/**
 * The constants both SIMD readers start with, in the locals each gives: the digit-pair weights of
 * the dot products that join 2, 4 and 8 digits (10, 100, 10000 against 1), JSON's whitespace bytes
 * as a 16-entry lookup table, and the low-nibble mask that indexes it.
 */
function readerConstants(x: {
  readonly w10: number
  readonly w100: number
  readonly w10k: number
  readonly space: number
  readonly low: number
}): number[] {
  return [
    ...i16x8Const([10, 1, 10, 1, 10, 1, 10, 1]),
    ...set(x.w10),
    ...i16x8Const([100, 1, 100, 1, 100, 1, 100, 1]),
    ...set(x.w100),
    ...i16x8Const([10000, 1, 10000, 1, 10000, 1, 10000, 1]),
    ...set(x.w10k),
    ...vop(simd.const),
    ...range(16).map((k) => (k === 0 ? ch(' ') : k === 9 ? ch('\t') : k === 10 ? ch('\n') : k === 13 ? ch('\r') : 0)),
    ...set(x.space),
    ...splatByte(x.low, 15),
  ]
}

function compactReaderBody(): number[] {
  const P = {at: 0, last: 1, out: 2, width: 3, maxRows: 4, table: 5, tape: 6, ws: 7}
  const V = {
    p: 8,
    tp: 9,
    cnt: 10,
    rows: 11,
    j: 12,
    s: 13,
    e: 14,
    n: 15,
    d: 16,
    neg: 17,
    ent: 18,
    err: 19,
    f: 20,
    r: 21,
    k: 22,
    e2: 23,
    ent2: 24,
  }
  const L = {M: 25}
  const X = {
    v: 26,
    tw: 27,
    u: 28,
    u2: 29,
    a: 30,
    comma: 31,
    close: 32,
    c48: 33,
    dot: 34,
    w10: 35,
    w100: 36,
    w10k: 37,
    acc: 38,
    space: 39,
    low: 40,
  }
  const notCompact = [...i32(NOT_COMPACT), op.return]
  const errIf = (cond: number[]): number[] => [...get(V.err), ...cond, op.i32Or, ...set(V.err)]
  const index = separatorIndex({
    at: P.at,
    last: P.last,
    tape: P.tape,
    p: V.p,
    tp: V.tp,
    cnt: V.cnt,
    k: V.k,
    M: L.M,
    v: X.v,
    comma: X.comma,
    close: X.close,
  })
  // pass 2: one value from `s` to the separator at tape[j + 4 * slot]: checked into acc, its
  // table entry in `ent`, its digits right-aligned in `u`
  // (ws: first past up to 16 bytes of JSON whitespace; each byte's low nibble picks the one
  // whitespace character it could be, and only that character matches; the bit past the 16 lanes
  // stops a run of 16 there, where the value's own check meets the 17th: a ctz of 32 once jumped
  // 32 bytes, into a long value, which was then read from its middle)
  const skipWs = (s: number): number[] => [
    ...get(X.space),
    ...get(s),
    ...v128Load(0),
    ...tee(X.v),
    ...get(X.low),
    ...vop(simd.v128And),
    ...vop(simd.swizzle),
    ...get(X.v),
    ...vop(simd.i8x16Eq),
    ...vop(simd.i8x16Bitmask),
    ...i32(0xffff),
    opc.i32Xor,
    ...i32(1 << 16),
    op.i32Or,
    opc.i32Ctz,
    ...get(s),
    op.i32Add,
    ...set(s),
  ]
  const prep = (s: number, e: number, ent: number, u: number, slot: number, ws: boolean, half: number): number[] => [
    ...(ws ? skipWs(s) : []),
    ...get(V.j),
    ...i32Load(4 * slot),
    ...tee(e),
    ...get(s),
    op.i32Sub,
    ...tee(V.n),
    ...i32(1),
    op.i32Sub,
    ...i32(FAST_LENGTH_MAX - 1),
    op.i32GtU,
    op.if,
    EMPTY_BLOCK,
    ...notCompact,
    op.end,
    ...get(s),
    ...v128Load(0),
    ...tee(X.v),
    ...get(X.dot),
    ...vop(simd.i8x16Eq),
    ...vop(simd.i8x16Bitmask),
    ...i32(1 << 16),
    op.i32Or,
    opc.i32Ctz,
    ...set(V.d),
    ...get(s),
    op.i32Load8U,
    0,
    0,
    ...i32(ch('-')),
    op.i32Eq,
    ...set(V.neg),
    ...get(P.table),
    ...get(V.d),
    ...i32(FAST_LENGTH_MAX + 1),
    op.i32Mul,
    ...get(V.n),
    op.i32Add,
    ...i32(1),
    op.i32Shl,
    ...get(V.neg),
    op.i32Or,
    ...i32(6),
    op.i32Shl,
    op.i32Add,
    ...set(ent),
    ...get(X.v),
    ...get(ent),
    ...v128Load(half + FAST_ENTRY.base),
    ...vop(simd.i8x16Sub),
    ...tee(X.tw),
    ...get(ent),
    ...v128Load(half + FAST_ENTRY.limit),
    ...vop(simd.i8x16MinU),
    ...get(X.tw),
    ...vop(simd.i8x16Eq),
    ...get(X.acc),
    ...vop(simd.v128And),
    ...set(X.acc),
    ...get(X.v),
    ...get(X.c48),
    ...vop(simd.i8x16Sub),
    ...get(ent),
    ...v128Load(half + FAST_ENTRY.shuffle),
    ...vop(simd.swizzle),
    ...set(u),
  ]
  const dot = (w: number): number[] => [...get(w), ...vop(simd.i32x4DotI16x8S)]
  // digits (16 lanes) -> [H, L, H, L]: the first 8 and the last 8 as integers
  const toInt = (u: number): number[] => [
    ...get(u),
    ...vop(simd.i16x8ExtendLowI8x16U),
    ...dot(X.w10),
    ...get(u),
    ...vop(simd.i16x8ExtendHighI8x16U),
    ...dot(X.w10),
    ...vop(simd.i16x8NarrowI32x4U),
    ...dot(X.w100),
    ...tee(X.a),
    ...get(X.a),
    ...vop(simd.i16x8NarrowI32x4U),
    ...dot(X.w10k),
  ]
  const single = (u: number, ent: number, half: number): number[] => [
    ...get(P.out),
    ...toInt(u),
    ...tee(X.a),
    ...vop(simd.i32x4ExtractLane),
    0,
    op.i64ExtendI32U,
    ...i64(100_000_000n),
    op.i64Mul,
    ...get(X.a),
    ...vop(simd.i32x4ExtractLane),
    1,
    op.i64ExtendI32U,
    op.i64Add,
    op.f64ConvertI64S,
    ...get(ent),
    ...f64Load(half + FAST_ENTRY.divisor),
    op.f64Div,
    ...f64Store(0),
    ...get(P.out),
    ...i32(8),
    op.i32Add,
    ...set(P.out),
  ]
  // two values of at most 8 digits: their last 8 lanes side by side, then the same steps once
  const pair = (half: number, half2: number): number[] => [
    ...get(P.out),
    ...get(X.u),
    ...get(X.u2),
    ...vop(simd.shuffle),
    ...range(8).map((k) => 8 + k),
    ...range(8).map((k) => 24 + k),
    ...set(X.u),
    ...toInt(X.u),
    ...vop(simd.f64x2ConvertLowI32x4S),
    ...get(V.ent2),
    ...get(V.ent),
    ...vop(simd.load64Zero),
    3,
    ...uleb(half + FAST_ENTRY.divisor),
    ...vop(simd.load64Lane),
    3,
    ...uleb(half2 + FAST_ENTRY.divisor),
    1,
    ...vop(simd.f64x2Div),
    ...vop(simd.store),
    0,
    0,
    ...get(P.out),
    ...i32(16),
    op.i32Add,
    ...set(P.out),
  ]
  const narrow = (ent: number, half: number): number[] => [...get(ent), ...i32Load(half + FAST_ENTRY.narrow)]
  // two values, the second with the table half `half2` (FAST_LAST_HALF when it ends the row)
  const step = (ws: boolean, half2: number): number[] => [
    ...prep(V.s, V.e, V.ent, X.u, 0, ws, 0),
    ...get(V.e),
    ...i32(1),
    op.i32Add,
    ...set(V.k),
    ...prep(V.k, V.e2, V.ent2, X.u2, 1, ws, half2),
    ...narrow(V.ent, 0),
    ...narrow(V.ent2, half2),
    op.i32And,
    op.if,
    EMPTY_BLOCK,
    ...pair(0, half2),
    op.else,
    ...single(X.u, V.ent, 0),
    ...single(X.u2, V.ent2, half2),
    op.end,
    ...get(V.j),
    ...i32(8),
    op.i32Add,
    ...set(V.j),
    ...get(V.e2),
    ...i32(1),
    op.i32Add,
    ...set(V.s),
  ]
  // the rows, with (ws) or without JSON whitespace before a row's '[' and before its values
  const rowsLoop = (ws: boolean): number[] => [
    op.loop,
    EMPTY_BLOCK,
    ...rowStart(ws, {s: V.s, f: V.f, width: P.width}, errIf),
    // values four, then two at a time while more than two remain, then the last one or two (the last ends at ']')
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(V.f),
    ...i32(4),
    op.i32LeU,
    op.brIf,
    1,
    ...step(ws, 0),
    ...step(ws, 0),
    ...get(V.f),
    ...i32(4),
    op.i32Sub,
    ...set(V.f),
    op.br,
    0,
    op.end,
    op.end,
    ...get(V.f),
    ...i32(2),
    op.i32GtU,
    op.if,
    EMPTY_BLOCK,
    ...step(ws, 0),
    ...get(V.f),
    ...i32(2),
    op.i32Sub,
    ...set(V.f),
    op.end,
    ...get(V.f),
    ...i32(2),
    op.i32Eq,
    op.if,
    EMPTY_BLOCK,
    ...step(ws, FAST_LAST_HALF),
    op.else,
    ...prep(V.s, V.e, V.ent, X.u, 0, ws, FAST_LAST_HALF),
    ...single(X.u, V.ent, FAST_LAST_HALF),
    ...get(V.j),
    ...i32(4),
    op.i32Add,
    ...set(V.j),
    ...get(V.e),
    ...i32(1),
    op.i32Add,
    ...set(V.s),
    op.end,
    ...rowEnd(V),
    ...get(V.err),
    ...get(X.acc),
    ...vop(simd.i8x16AllTrue),
    op.i32Eqz,
    op.i32Or,
    op.if,
    EMPTY_BLOCK,
    ...notCompact,
    op.end,
    ...get(V.r),
    op.brIf,
    0,
    op.end,
  ]
  const rows = [
    ...rowsFromTape(V, P),
    op.if,
    EMPTY_BLOCK,
    ...notCompact,
    op.end,
    ...get(P.tape),
    ...set(V.j),
    ...get(P.at),
    ...set(V.s),
    ...get(V.rows),
    ...set(V.r),
    ...i32(0),
    ...set(V.err),
    ...i32(-1),
    ...vop(simd.i8x16Splat),
    ...set(X.acc),
    ...get(P.ws),
    op.if,
    EMPTY_BLOCK,
    ...rowsLoop(true),
    op.else,
    ...rowsLoop(false),
    op.end,
    ...get(V.rows),
    ...i32(NOT_COMPACT),
    ...get(V.s),
    ...get(P.last),
    op.i32Eq,
    op.select,
  ]
  const locals = vec([
    [...uleb(17), T_I32],
    [...uleb(1), T_I64],
    [...uleb(15), T_V128],
  ])
  return [
    ...locals,
    ...splatByte(X.comma, ch(',')),
    ...splatByte(X.close, ch(']')),
    ...splatByte(X.c48, ch('0')),
    ...splatByte(X.dot, ch('.')),
    ...readerConstants(X),
    ...index,
    ...rows,
    op.end,
  ]
}

/**
 * infinite(at, end) -> 1 when a float64 in [at, end) is +Infinity or -Infinity, else 0: the check
 * of float64 rows (application/octet-stream), where NaN stands for a missing value (JSON's null)
 * but an infinity is refused (JSON.parse reads 1e400 as Infinity, and the JSON path refuses it
 * too). |x| == Infinity for two values at a time, four vectors a loop (64 bytes), the last up to
 * seven values one by one: 0.42-0.50 µs a call for 50 x 46 values in one process (load 5.5; 0.56-0.63
 * with the four compares chained on the accumulator), about 1% of the float64 route. NaN is never equal.
 */
function infiniteBody(): number[] {
  const P = {at: 0, end: 1}
  const X = {acc: 2, inf: 3}
  const L = {one: 4}
  const F64X2_SPLAT = 0x14
  const F64X2_EQ = 0x47
  const F64X2_ABS = 0xec
  const V128_ANY_TRUE = 0x53
  const F64_ABS = 0x99
  const pairIsInfinite = (offset: number): number[] => [
    ...get(P.at),
    ...v128Load(offset),
    ...vop(F64X2_ABS),
    ...get(X.inf),
    ...vop(F64X2_EQ),
  ]
  return [
    ...vec([
      [...uleb(2), T_V128],
      [...uleb(1), T_I32],
    ]),
    ...vop(simd.const),
    ...new Array(16).fill(0),
    ...set(X.acc),
    op.f64Const,
    ...f64Bytes(Number.POSITIVE_INFINITY),
    ...vop(F64X2_SPLAT),
    ...set(X.inf),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(P.at),
    ...i32(64),
    op.i32Add,
    ...get(P.end),
    op.i32GtU,
    op.brIf,
    1,
    // ((a | b) | (c | d)) | acc: one step of the accumulator's chain a loop (four were the bound)
    ...pairIsInfinite(0),
    ...pairIsInfinite(16),
    ...vop(simd.v128Or),
    ...pairIsInfinite(32),
    ...pairIsInfinite(48),
    ...vop(simd.v128Or),
    ...vop(simd.v128Or),
    ...get(X.acc),
    ...vop(simd.v128Or),
    ...set(X.acc),
    ...get(P.at),
    ...i32(64),
    op.i32Add,
    ...set(P.at),
    op.br,
    0,
    op.end,
    op.end,
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(P.at),
    ...get(P.end),
    op.i32GeU,
    op.brIf,
    1,
    ...get(L.one),
    ...get(P.at),
    ...f64Load(0),
    F64_ABS,
    op.f64Const,
    ...f64Bytes(Number.POSITIVE_INFINITY),
    op.f64Eq,
    op.i32Or,
    ...set(L.one),
    ...get(P.at),
    ...i32(8),
    op.i32Add,
    ...set(P.at),
    op.br,
    0,
    op.end,
    op.end,
    ...get(X.acc),
    ...vop(V128_ANY_TRUE),
    ...get(L.one),
    op.i32Or,
    op.end,
  ]
}

// ---------------------------------------------------------------------------------------------
// The long-number rows reader: full-precision doubles (as String(x) and Python's repr print them)
// with WebAssembly SIMD and Eisel-Lemire, no scan chain.

/** Bytes of a value after its sign the long reader reads (its masks are i32: one bit a byte, and one past). */
const LONG_LENGTH_MAX = 31
/** Significant digits at most: D < 10^19 < 2^64 is exact in a u64 (fast_float's max_digits_u64). */
const LONG_DIGITS_MAX = MAX_DIGITS_U64
/** The digit window: its significant digits and at most one '.' inside, LONG_DIGITS_MAX + 1 bytes at most. */
const LONG_WINDOW_MAX = LONG_DIGITS_MAX + 1
/**
 * One entry per (window length 0..LONG_WINDOW_MAX, its '.' at 0..length, length meaning none):
 * three swizzles, then what each of 32 bytes must be (byte - '0' - base <= limit, unsigned), then
 * the decimal exponent the '.' gives (minus the digits after it).
 */
const LONG_SIDE = LONG_WINDOW_MAX + 1
const LONG_ENTRY_BYTES = 128
const LONG_ENTRY = {lowTail: 0, highTail: 16, head: 32, base: 48, limit: 80, exp: 112} as const
const LONG_TABLE_BYTES = LONG_SIDE * LONG_SIDE * LONG_ENTRY_BYTES
/** swizzle's answer for a lane index of 16 or more is 0 (core spec 2.0, i8x16.swizzle). */
const LANE_ZERO = 0x80
/** "null" as a little-endian i32, and the decimal exponent that marks it (no number's: exponents are capped near 10^5). */
const NULL_WORD = Buffer.from('null', 'latin1').readInt32LE(0)
const NULL_EXPONENT = 1 << 29
/** 10^8 and 10^16: D = head x 10^16 + tail's first 8 digits x 10^8 + its last 8. */
const TEN_8 = 100_000_000n
const TEN_16 = TEN_8 * TEN_8

/**
 * The long reader's swizzles: for a digit window of `length` bytes (the value's bytes from its
 * first significant digit to its exponent or end) with its '.' at `point` (length when none), the
 * window's digits right-aligned in 32 lanes: the last 16 (tail, lane 15 the last digit) from the
 * window's first 16 bytes (lowTail) or its next 16 (highTail), and the 16 before them (head; with
 * at most 19 digits only its last 3 lanes can hold one, always from the first 16 bytes). Lanes
 * without a digit take LANE_ZERO and so become 0.
 * The same entry checks a whole value of `length` bytes after its sign, without exponent (the
 * long reader's common case, as String(x) prints x from 1e-7 to 1e21): a digit in every byte but
 * the '.', a first digit that is not '0' when more integer digits follow; anything after the
 * value. A (length, point) that makes no JSON number or more than LONG_DIGITS_MAX digits demands
 * a digit where the value has its '.' (or a '.' where it has none), so that no value passes.
 */
function longTable(): Uint8Array {
  const table = new Uint8Array(LONG_TABLE_BYTES)
  const view = new DataView(table.buffer)
  const relative = (c: number): number => (c - ch('0')) & 0xff
  for (let length = 0; length <= LONG_WINDOW_MAX; length++) {
    for (let point = 0; point <= length; point++) {
      const at = (length * LONG_SIDE + point) * LONG_ENTRY_BYTES
      table.fill(LANE_ZERO, at, at + LONG_ENTRY.base)
      const hasPoint = point < length
      const digits = length - (hasPoint ? 1 : 0)
      const intDigits = hasPoint ? point : length
      const valid = intDigits >= 1 && (!hasPoint || length - point - 1 >= 1) && digits <= LONG_DIGITS_MAX
      for (let lane = 0; lane < 32; lane++) {
        let [base, limit] = lane < length ? [0, 9] : [0, 0xff]
        if (valid && hasPoint && lane === point) [base, limit] = [relative(ch('.')), 0]
        else if (valid && lane === 0 && intDigits > 1) [base, limit] = [1, 8]
        table[at + LONG_ENTRY.base + lane] = base
        table[at + LONG_ENTRY.limit + lane] = limit
      }
      // too many digits: a '.' in the first byte, which this entry's values do not have
      if (digits > LONG_DIGITS_MAX && length > 0)
        [table[at + LONG_ENTRY.base], table[at + LONG_ENTRY.limit]] = [relative(ch('.')), 0]
      view.setInt32(at + LONG_ENTRY.exp, hasPoint ? -(length - point - 1) : 0, true)
      if (digits > LONG_DIGITS_MAX) continue
      for (let i = 0; i < digits; i++) {
        const position = i + (point < length && i >= point ? 1 : 0)
        const fromEnd = digits - 1 - i
        if (fromEnd < 16)
          table[at + (position < 16 ? LONG_ENTRY.lowTail : LONG_ENTRY.highTail) + 15 - fromEnd] = position % 16
        else table[at + LONG_ENTRY.head + 31 - fromEnd] = position
      }
    }
  }
  return table
}

/**
 * readLong(at, last, out, width, maxRows, table, tape, ws, pow) -> rows, or NOT_COMPACT: the rows of
 * `{"features": [...]}` whose values are JSON numbers of up to LONG_DIGITS_MAX significant digits
 * (up to LONG_LENGTH_MAX bytes after the sign, exponents of either sign, e or E), as String(x) and
 * Python's repr print full-precision doubles, with or without whitespace before rows and values
 * (ws, as readCompact). Pass 1 is readCompact's (separatorIndex). Pass 2 reads every value on its
 * own from its start and its separator (no chain of dependent loads from one value to the next):
 * the 32 bytes after its sign become i32 masks (digits, '.', '0'; by them the significand's end),
 * which check the JSON grammar with a handful of integer operations; the significant digits (from
 * the first non-zero one to the significand's end, the '.' skipped) are right-aligned by three
 * swizzles from longTable and turned into the integer D < 10^19 by the compact reader's
 * multiply-add steps (i32x4.dot_i16x8_s); the exponent's digits (rare, short) are read one by one.
 * D x 10^exp then goes through Eisel-Lemire (eiselLemireCode), the correctly rounded double, so
 * every value equals JSON.parse's. Anything else (null, more digits, a subnormal or infinite
 * result, any syntax error) returns NOT_COMPACT, and the general reader (read) reads the body,
 * with its own exact paths and fallbacks.
 */
function longReaderBody(): number[] {
  const P = {at: 0, last: 1, out: 2, width: 3, maxRows: 4, table: 5, tape: 6, ws: 7, pow: 8}
  const first = 9
  let next = first
  const take = <K extends string>(names: readonly K[]): Record<K, number> =>
    Object.fromEntries(names.map((n) => [n, next++])) as Record<K, number>
  const V = take([
    'p',
    'tp',
    'cnt',
    'rows',
    'j',
    's',
    'e',
    'k',
    'r',
    'f',
    'err',
    'neg',
    'q',
    'len',
    'x',
    'd',
    'dig',
    'dot',
    'lim',
    'lw',
    'dd',
    'ex',
    'eneg',
    'exp',
    'lz',
    'upper',
    'shift',
    'power2',
    'ent',
    'o',
    'outStart',
    'ok',
  ] as const)
  const i32Count = next - first
  const I = take(['M', 'mant', 'w', 't', 'hi', 'lo', 'ad', 'bd', 'adbc', 'second', 'm'] as const)
  const i64Count = next - first - i32Count
  const F = take(['value'] as const)
  const X = take([
    'v',
    'v2',
    'tw',
    'comma',
    'close',
    'c48',
    'nine',
    'dotS',
    'zero',
    'w10',
    'w100',
    'w10k',
    'space',
    'low',
    'y',
    'a',
  ] as const)
  const v128Count = next - first - i32Count - i64Count - 1
  const notCompact = [...i32(NOT_COMPACT), op.return]
  const errIf = (cond: number[]): number[] => [...get(V.err), ...cond, op.i32Or, ...set(V.err)]
  const index = separatorIndex({
    at: P.at,
    last: P.last,
    tape: P.tape,
    p: V.p,
    tp: V.tp,
    cnt: V.cnt,
    k: V.k,
    M: I.M,
    v: X.v,
    comma: X.comma,
    close: X.close,
  })
  // an i32 mask of the 32 bytes in v, v2 (one bit a byte) from a per-vector test that leaves its lanes on the stack
  const mask32 = (test: (v: number) => number[]): number[] => [
    ...test(X.v),
    ...vop(simd.i8x16Bitmask),
    ...test(X.v2),
    ...vop(simd.i8x16Bitmask),
    ...i32(16),
    op.i32Shl,
    op.i32Or,
  ]
  // on bytes minus '0': a digit is 0..9
  const isDigit = (v: number): number[] => [
    ...get(v),
    ...get(X.nine),
    ...vop(simd.i8x16MinU),
    ...get(v),
    ...vop(simd.i8x16Eq),
  ]
  const isByte =
    (splatted: number) =>
    (v: number): number[] => [...get(v), ...get(splatted), ...vop(simd.i8x16Eq)]
  const bit = (local: number): number[] => [...i32(1), ...get(local), op.i32Shl]
  const byteAt = (local: number, offset = 0): number[] => [
    ...get(V.q),
    ...get(local),
    op.i32Add,
    op.i32Load8U,
    0,
    ...uleb(offset),
  ]
  // 16 digit lanes (0..9) -> 4 lanes of 4 digits each
  const fourDigits = (u: number): number[] => [
    ...get(u),
    ...vop(simd.i16x8ExtendLowI8x16U),
    ...get(X.w10),
    ...vop(simd.i32x4DotI16x8S),
    ...get(u),
    ...vop(simd.i16x8ExtendHighI8x16U),
    ...get(X.w10),
    ...vop(simd.i32x4DotI16x8S),
    ...vop(simd.i16x8NarrowI32x4U),
    ...get(X.w100),
    ...vop(simd.i32x4DotI16x8S),
  ]
  const lane = (k: number): number[] => [...get(X.a), ...vop(simd.i32x4ExtractLane), k, op.i64ExtendI32U]
  const eiselLemire = eiselLemireCode(
    {
      exp: V.exp,
      mant: I.mant,
      lz: V.lz,
      w: I.w,
      t: I.t,
      hi: I.hi,
      lo: I.lo,
      ad: I.ad,
      bd: I.bd,
      adbc: I.adbc,
      second: I.second,
      m: I.m,
      upper: V.upper,
      shift: V.shift,
      power2: V.power2,
      value: F.value,
    },
    P.pow,
    (cond) => [...cond, op.if, EMPTY_BLOCK, ...notCompact, op.end],
  )
  // first past up to 16 bytes of JSON whitespace at s (as readCompact's skipWs)
  const skipWs = [
    ...get(X.space),
    ...get(V.s),
    ...v128Load(0),
    ...tee(X.v),
    ...get(X.low),
    ...vop(simd.v128And),
    ...vop(simd.swizzle),
    ...get(X.v),
    ...vop(simd.i8x16Eq),
    ...vop(simd.i8x16Bitmask),
    ...i32(0xffff),
    opc.i32Xor,
    ...i32(1 << 16),
    op.i32Or,
    opc.i32Ctz,
    ...get(V.s),
    op.i32Add,
    ...set(V.s),
  ]
  // one value from s to the separator e, which must be `separator`; its double to out
  const value = (ws: boolean): number[] => [
    ...(ws ? skipWs : []),
    ...get(V.j),
    ...i32Load(0),
    ...set(V.e),
    ...get(V.s),
    op.i32Load8U,
    0,
    0,
    ...i32(ch('-')),
    op.i32Eq,
    ...tee(V.neg),
    ...get(V.s),
    op.i32Add,
    ...set(V.q),
    ...get(V.e),
    ...get(V.q),
    op.i32Sub,
    ...set(V.len),
    // ',' within a row, ']' after its last value
    ...errIf([
      ...get(V.e),
      op.i32Load8U,
      0,
      0,
      ...i32(ch(',')),
      ...i32(ch(']')),
      ...get(V.f),
      ...i32(1),
      op.i32Ne,
      op.select,
      op.i32Ne,
    ]),
    // the 32 bytes after the sign, minus '0' (digits become 0..9)
    ...get(V.q),
    ...v128Load(0),
    ...get(X.c48),
    ...vop(simd.i8x16Sub),
    ...set(X.v),
    ...get(V.q),
    ...v128Load(16),
    ...get(X.c48),
    ...vop(simd.i8x16Sub),
    ...set(X.v2),
    // The common case first: no exponent, at most LONG_WINDOW_MAX bytes; the table entry of
    // (length, first '.') checks every byte at once (as the compact reader's) and is the digit window's
    ...i32(0),
    ...set(V.ok),
    ...get(V.len),
    ...i32(1),
    op.i32Sub,
    ...i32(LONG_WINDOW_MAX - 1),
    op.i32LeU,
    op.if,
    EMPTY_BLOCK,
    ...get(P.table),
    ...get(V.len),
    ...i32(LONG_SIDE),
    op.i32Mul,
    // the first '.' among the first 16 bytes only: a '.' further on (a value of 1e15 or more with a
    // fraction, rare) picks the entry without one, which fails, and the general path below reads it
    ...isByte(X.dotS)(X.v),
    ...vop(simd.i8x16Bitmask),
    ...bit(V.len),
    op.i32Or,
    opc.i32Ctz,
    op.i32Add,
    ...i32(LONG_ENTRY_BYTES),
    op.i32Mul,
    op.i32Add,
    ...set(V.ent),
    ...get(X.v),
    ...get(V.ent),
    ...v128Load(LONG_ENTRY.base),
    ...vop(simd.i8x16Sub),
    ...tee(X.tw),
    ...get(V.ent),
    ...v128Load(LONG_ENTRY.limit),
    ...vop(simd.i8x16MinU),
    ...get(X.tw),
    ...vop(simd.i8x16Eq),
    ...get(X.v2),
    ...get(V.ent),
    ...v128Load(LONG_ENTRY.base + 16),
    ...vop(simd.i8x16Sub),
    ...tee(X.tw),
    ...get(V.ent),
    ...v128Load(LONG_ENTRY.limit + 16),
    ...vop(simd.i8x16MinU),
    ...get(X.tw),
    ...vop(simd.i8x16Eq),
    ...vop(simd.v128And),
    ...vop(simd.i8x16AllTrue),
    ...set(V.ok),
    op.end,
    ...get(V.ok),
    op.if,
    EMPTY_BLOCK,
    ...get(V.q),
    ...set(V.k),
    ...get(V.ent),
    ...i32Load(LONG_ENTRY.exp),
    ...set(V.exp),
    op.else,
    // null, a missing value: the empty window (D = 0) and NULL_EXPONENT, which pass 4 makes NaN
    // (here, off the common path: its 'n' fails the table entry's check)
    ...get(V.len),
    ...i32(4),
    op.i32Eq,
    ...get(V.s),
    ...i32Load(0),
    ...i32(NULL_WORD),
    op.i32Eq,
    op.i32And,
    op.if,
    EMPTY_BLOCK,
    ...get(V.q),
    ...set(V.k),
    ...get(P.table),
    ...set(V.ent),
    ...i32(NULL_EXPONENT),
    ...set(V.exp),
    op.else,
    // 1..LONG_LENGTH_MAX bytes: the i32 masks hold them and a bit past them
    ...get(V.len),
    ...i32(1),
    op.i32Sub,
    ...i32(LONG_LENGTH_MAX - 1),
    op.i32GtU,
    op.if,
    EMPTY_BLOCK,
    ...notCompact,
    op.end,
    ...bit(V.len),
    ...i32(1),
    op.i32Sub,
    ...set(V.lim),
    ...mask32(isDigit),
    ...get(V.lim),
    op.i32And,
    ...set(V.dig),
    ...mask32(isByte(X.dotS)),
    ...get(V.lim),
    op.i32And,
    ...set(V.dot),
    // x: the significand's end, its first byte that is neither a digit nor '.' (len when none)
    ...get(V.dig),
    ...get(V.dot),
    op.i32Or,
    ...i32(-1),
    opc.i32Xor,
    ...get(V.lim),
    op.i32And,
    ...bit(V.len),
    op.i32Or,
    opc.i32Ctz,
    ...set(V.x),
    // the significand's '.', at most one (d = x when none), with a digit on each side; a leading '0' stands alone
    ...get(V.dot),
    ...bit(V.x),
    ...i32(1),
    op.i32Sub,
    op.i32And,
    ...set(V.dot),
    ...errIf([...get(V.dot), ...get(V.dot), ...i32(1), op.i32Sub, op.i32And, op.i32Eqz, op.i32Eqz]),
    ...get(V.dot),
    ...bit(V.x),
    op.i32Or,
    opc.i32Ctz,
    ...set(V.d),
    ...errIf([...get(V.d), op.i32Eqz]),
    ...errIf([...get(V.d), ...i32(1), op.i32Add, ...get(V.x), op.i32Eq]),
    ...errIf([...get(V.q), op.i32Load8U, 0, 0, ...i32(ch('0')), op.i32Eq, ...get(V.d), ...i32(1), op.i32Ne, op.i32And]),
    // the exponent: 'e' or 'E', an optional sign, then digits to the end
    ...i32(0),
    ...set(V.ex),
    ...get(V.x),
    ...get(V.len),
    op.i32LtU,
    op.if,
    EMPTY_BLOCK,
    ...errIf([...byteAt(V.x), ...i32(0x20), op.i32Or, ...i32(ch('e')), op.i32Ne]),
    ...byteAt(V.x, 1),
    ...i32(ch('-')),
    op.i32Eq,
    ...set(V.eneg),
    ...get(V.x),
    ...i32(1),
    op.i32Add,
    ...get(V.eneg),
    ...byteAt(V.x, 1),
    ...i32(ch('+')),
    op.i32Eq,
    op.i32Or,
    op.i32Add,
    ...tee(V.k),
    ...get(V.len),
    op.i32GeU,
    ...get(V.dig),
    ...i32(-1),
    opc.i32Xor,
    ...get(V.lim),
    op.i32And,
    ...get(V.k),
    op.i32ShrU,
    op.i32Or,
    ...get(V.err),
    op.i32Or,
    ...set(V.err),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(V.k),
    ...get(V.len),
    op.i32GeU,
    op.brIf,
    1,
    ...get(V.ex),
    ...i32(10),
    op.i32Mul,
    ...byteAt(V.k),
    ...i32(ch('0')),
    op.i32Sub,
    op.i32Add,
    ...get(V.ex),
    ...get(V.ex),
    ...i32(EXPONENT_CAP),
    op.i32LtS,
    op.select,
    ...set(V.ex),
    ...get(V.k),
    ...i32(1),
    op.i32Add,
    ...set(V.k),
    op.br,
    0,
    op.end,
    op.end,
    ...i32(0),
    ...get(V.ex),
    op.i32Sub,
    ...get(V.ex),
    ...get(V.eneg),
    op.select,
    ...set(V.ex),
    op.end,
    // exp = the exponent minus the digits after the '.'
    ...get(V.ex),
    ...get(V.x),
    ...get(V.d),
    op.i32Sub,
    ...i32(1),
    op.i32Sub,
    ...i32(0),
    ...get(V.d),
    ...get(V.x),
    op.i32LtU,
    op.select,
    op.i32Sub,
    ...set(V.exp),
    // The digit window: the significand's bytes, lw of them with the '.' at dd (lw when none), and
    // its digits (leading zeros included: they add nothing) while at most LONG_DIGITS_MAX; else
    // from the first non-zero digit (0.000001234...), and D = 0 when there is none.
    ...get(V.x),
    ...set(V.lw),
    ...get(V.d),
    ...set(V.dd),
    ...get(V.q),
    ...set(V.k),
    ...get(V.lw),
    ...get(V.dd),
    ...get(V.lw),
    op.i32LtU,
    op.i32Sub,
    ...i32(LONG_DIGITS_MAX),
    op.i32GtU,
    op.if,
    EMPTY_BLOCK,
    ...get(V.dig),
    ...mask32(isByte(X.zero)),
    ...i32(-1),
    opc.i32Xor,
    op.i32And,
    ...bit(V.x),
    ...i32(1),
    op.i32Sub,
    op.i32And,
    ...bit(V.x),
    op.i32Or,
    opc.i32Ctz,
    ...set(V.k),
    ...get(V.x),
    ...get(V.k),
    op.i32Sub,
    ...set(V.lw),
    ...get(V.d),
    ...get(V.k),
    op.i32Sub,
    ...tee(V.dd),
    ...get(V.lw),
    ...get(V.dd),
    ...get(V.lw),
    op.i32LtU,
    op.select,
    ...set(V.dd),
    ...failIfMore(),
    ...get(V.q),
    ...get(V.k),
    op.i32Add,
    ...set(V.k),
    op.end,
    ...get(P.table),
    ...get(V.lw),
    ...i32(LONG_SIDE),
    op.i32Mul,
    ...get(V.dd),
    op.i32Add,
    ...i32(LONG_ENTRY_BYTES),
    op.i32Mul,
    op.i32Add,
    ...set(V.ent),
    op.end,
    op.end,
    // the window's address and its table entry to out, exp and the sign to the tape (its slot
    // i <= j was read already): pass 3 reads the digits, pass 4 makes the double
    ...get(P.out),
    ...get(V.k),
    opc.i32Store,
    ALIGN_4,
    0,
    ...get(P.out),
    ...get(V.ent),
    opc.i32Store,
    ALIGN_4,
    4,
    ...get(V.o),
    ...get(V.exp),
    ...i32(1),
    op.i32Shl,
    ...get(V.neg),
    op.i32Or,
    opc.i32Store,
    ALIGN_4,
    0,
    ...get(P.out),
    ...i32(8),
    op.i32Add,
    ...set(P.out),
    ...get(V.o),
    ...i32(4),
    op.i32Add,
    ...set(V.o),
    ...get(V.j),
    ...i32(4),
    op.i32Add,
    ...set(V.j),
    ...get(V.e),
    ...i32(1),
    op.i32Add,
    ...set(V.s),
  ]
  // more significant digits than a u64 holds exactly: no fast path
  function failIfMore(): number[] {
    return [
      ...get(V.lw),
      ...get(V.dd),
      ...get(V.lw),
      op.i32LtU,
      op.i32Sub,
      ...i32(LONG_DIGITS_MAX),
      op.i32GtU,
      op.if,
      EMPTY_BLOCK,
      ...notCompact,
      op.end,
    ]
  }
  const rowsLoop = (ws: boolean): number[] => [
    op.loop,
    EMPTY_BLOCK,
    ...rowStart(ws, {s: V.s, f: V.f, width: P.width}, errIf),
    op.loop,
    EMPTY_BLOCK,
    ...value(ws),
    ...get(V.f),
    ...i32(1),
    op.i32Sub,
    ...tee(V.f),
    op.brIf,
    0,
    op.end,
    ...rowEnd(V),
    ...get(V.err),
    op.if,
    EMPTY_BLOCK,
    ...notCompact,
    op.end,
    ...get(V.r),
    op.brIf,
    0,
    op.end,
  ]
  const rows = [
    ...rowsFromTape(V, P),
    op.if,
    EMPTY_BLOCK,
    ...notCompact,
    op.end,
    ...get(P.tape),
    ...set(V.j),
    ...get(P.tape),
    ...set(V.o),
    ...get(P.out),
    ...set(V.outStart),
    ...get(P.at),
    ...set(V.s),
    ...get(V.rows),
    ...set(V.r),
    ...i32(0),
    ...set(V.err),
    ...get(P.ws),
    op.if,
    EMPTY_BLOCK,
    ...rowsLoop(true),
    op.else,
    ...rowsLoop(false),
    op.end,
    ...get(V.s),
    ...get(P.last),
    op.i32Ne,
    op.if,
    EMPTY_BLOCK,
    ...notCompact,
    op.end,
    // pass 3: every value's digits, from its window, into D (an i64 in out)
    ...get(V.outStart),
    ...set(V.s),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(V.s),
    ...get(P.out),
    op.i32GeU,
    op.brIf,
    1,
    ...get(V.s),
    ...i32Load(0),
    ...set(V.k),
    ...get(V.s),
    ...i32Load(4),
    ...set(V.ent),
    ...get(V.k),
    ...v128Load(0),
    ...get(X.c48),
    ...vop(simd.i8x16Sub),
    ...tee(X.v),
    ...get(V.ent),
    ...v128Load(LONG_ENTRY.lowTail),
    ...vop(simd.swizzle),
    ...get(V.k),
    ...v128Load(16),
    ...get(X.c48),
    ...vop(simd.i8x16Sub),
    ...get(V.ent),
    ...v128Load(LONG_ENTRY.highTail),
    ...vop(simd.swizzle),
    ...vop(simd.v128Or),
    ...set(X.y),
    ...get(X.v),
    ...get(V.ent),
    ...v128Load(LONG_ENTRY.head),
    ...vop(simd.swizzle),
    ...set(X.v),
    // [tail's first 8 digits, its last 8, head's first 8 (0), its last 8]
    ...fourDigits(X.y),
    ...fourDigits(X.v),
    ...vop(simd.i16x8NarrowI32x4U),
    ...get(X.w10k),
    ...vop(simd.i32x4DotI16x8S),
    ...set(X.a),
    ...get(V.s),
    ...lane(3),
    ...i64(TEN_16),
    op.i64Mul,
    ...lane(0),
    ...i64(TEN_8),
    op.i64Mul,
    op.i64Add,
    ...lane(1),
    op.i64Add,
    op.i64Store,
    ALIGN_8,
    0,
    ...get(V.s),
    ...i32(8),
    op.i32Add,
    ...set(V.s),
    op.br,
    0,
    op.end,
    op.end,
    // pass 4: every D x 10^exp through Eisel-Lemire (each pass a loop of its own, short enough for
    // the processor to overlap several values' chains of dependent multiplies)
    ...get(V.outStart),
    ...set(V.s),
    ...get(P.tape),
    ...set(V.j),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(V.s),
    ...get(P.out),
    op.i32GeU,
    op.brIf,
    1,
    ...get(V.j),
    ...i32Load(0),
    ...tee(V.exp),
    ...i32(1),
    op.i32And,
    ...set(V.neg),
    ...get(V.exp),
    ...i32(1),
    op.i32ShrS,
    ...set(V.exp),
    ...get(V.s),
    op.i64Load,
    ALIGN_8,
    0,
    ...tee(I.mant),
    op.i64Eqz,
    op.if,
    EMPTY_BLOCK,
    // 0, or null's NaN (the general reader's: the same bits)
    op.f64Const,
    ...f64Bytes(Number.NaN),
    op.f64Const,
    ...f64Bytes(0),
    ...get(V.exp),
    ...i32(NULL_EXPONENT),
    op.i32Eq,
    op.select,
    ...set(F.value),
    op.else,
    ...eiselLemire,
    op.end,
    // the sign as a bit (an f64 select became a branch, mispredicted on mixed signs)
    ...get(V.s),
    ...get(F.value),
    op.i64ReinterpretF64,
    ...get(V.neg),
    op.i64ExtendI32U,
    ...i64(63n),
    op.i64Shl,
    op.i64Or,
    op.i64Store,
    ALIGN_8,
    0,
    ...get(V.s),
    ...i32(8),
    op.i32Add,
    ...set(V.s),
    ...get(V.j),
    ...i32(4),
    op.i32Add,
    ...set(V.j),
    op.br,
    0,
    op.end,
    op.end,
    ...get(V.rows),
  ]
  const locals = vec([
    [...uleb(i32Count), T_I32],
    [...uleb(i64Count), T_I64],
    [...uleb(1), T_F64],
    [...uleb(v128Count), T_V128],
  ])
  return [
    ...locals,
    ...splatByte(X.comma, ch(',')),
    ...splatByte(X.close, ch(']')),
    ...splatByte(X.c48, ch('0')),
    ...splatByte(X.nine, 9),
    ...splatByte(X.dotS, (ch('.') - ch('0')) & 0xff),
    ...splatByte(X.zero, 0),
    ...readerConstants(X),
    ...index,
    ...rows,
    op.end,
  ]
}

/** The scores the printer handles: 1e-9 <= |x| < 1e15 (and 0); others are printed by V8 (String). */
const PRINT_MIN = 1e-9
const PRINT_MAX = 1e15
/** After the 128-bit table: 5^0..5^27 as exact i64, then 17 bytes of digit scratch. */
const POW5_EXACT_OFFSET = POW5_OFFSET + (POW5_MAX - POW5_MIN + 1) * 16
const POW5_EXACT_MAX = 27
const SCRATCH_OFFSET = POW5_EXACT_OFFSET + (POW5_EXACT_MAX + 1) * 8
const SCRATCH_BYTES = 32
/** Significant digits printed: 17 always suffice to read a float64 back exactly. */
const PRINT_DIGITS = 17
/** The 17 digits are made as two i32 halves: the last LOW_DIGITS from D mod 10^8, the first 9 from D / 10^8. */
const LOW_DIGITS = 8
const DIGITS_SPLIT = 10n ** BigInt(LOW_DIGITS)

/**
 * print(scores, count, out, tables) -> bytes, or -1: the scores as JSON numbers separated by commas,
 * each with 17 significant digits (trailing zeros dropped), correctly rounded (half up) from exact
 * integer arithmetic, so every one reads back as the same float64: x = m 2^e with m < 2^53, and for
 * E = floor(log10 x), D = round(m 5^q 2^(e+q)) with q = 16 - E is x 10^q rounded, 10^16 <= D < 10^17;
 * m 5^q (q <= 27) is an exact 128-bit product. Written positionally (0.000000001234... to
 * 999999999999999.xx); 0 and -0 as 0. A score outside [1e-9, 1e15) in magnitude, or NaN, makes it
 * return -1 (the caller prints with String then). This replaces V8's shortest round-trip printing
 * (a runtime call per number, 0.3-0.4 us each here); the text can be longer than JSON.stringify's,
 * the value is the same.
 */
/** '0' in every byte of an i64, and "0.000000" as the bytes of a little-endian i64. */
const ASCII_ZEROS = 0x3030303030303030n
const ZERO_POINT = 0x303030303030_2e30n
/**
 * The 8 decimal digits of the i32 local `x` (< 10^8) as eight bytes 0..9 of an i64 (first digit in
 * the lowest byte, little-endian memory order), left on the stack; `v` and `t` are i64 scratch locals.
 */
function eightDigits(x: number, v: number, t: number): number[] {
  const lanes = (mask: bigint, multiplier: bigint, shift: bigint, divisor: bigint, width: bigint): number[] => [
    ...get(v),
    ...i64(multiplier),
    op.i64Mul,
    ...i64(shift),
    op.i64ShrU,
    ...i64(mask),
    op.i64And,
    ...set(t),
    ...get(t),
    ...get(v),
    ...get(t),
    ...i64(divisor),
    op.i64Mul,
    op.i64Sub,
    ...i64(width),
    op.i64Shl,
    op.i64Or,
    ...set(v),
  ]
  return [
    // two lanes of 32 bits: the first four digits, the last four
    ...get(x),
    ...i32(10_000),
    op.i32DivU,
    op.i64ExtendI32U,
    ...get(x),
    ...i32(10_000),
    op.i32RemU,
    op.i64ExtendI32U,
    ...i64(32n),
    op.i64Shl,
    op.i64Or,
    ...set(v),
    // y / 100 = y * 5243 >> 19 for y < 10^4: four lanes of 16 bits, two digits each
    ...lanes(0x0000007f_0000007fn, 5243n, 19n, 100n, 16n),
    // z / 10 = z * 103 >> 10 for z < 100: eight bytes, one digit each
    ...lanes(0x000f000f_000f000fn, 103n, 10n, 10n, 8n),
    ...get(v),
  ]
}

function printerBody(withOrder: boolean): number[] {
  const P = {scores: 0, count: 1, out: 2, tables: 3, work: 4}
  const V = {
    j: 5,
    e: 6,
    E: 7,
    q: 8,
    s: 9,
    n: 10,
    k: 11,
    p: 12,
    bits: 13,
    m: 14,
    t: 15,
    hi: 16,
    lo: 17,
    ad: 18,
    bd: 19,
    adbc: 20,
    D: 21,
    x: 22,
  }
  const fail = [...i32(-1), op.return]
  const failIf = (cond: number[]): number[] => [...cond, op.if, EMPTY_BLOCK, ...fail, op.end]
  const put = (byte: number[]): number[] => [
    ...get(V.p),
    ...byte,
    op.i32Store8,
    0,
    0,
    ...get(V.p),
    ...i32(1),
    op.i32Add,
    ...set(V.p),
  ]
  const scratch = (k: number[]): number[] => [
    ...get(P.tables),
    ...k,
    op.i32Add,
    op.i32Load8U,
    0,
    ...uleb(SCRATCH_OFFSET),
  ]
  const M32 = [...i64(0xffffffffn), op.i64And]
  const mul128 = [
    ...get(V.m),
    ...i64(32n),
    op.i64ShrU,
    ...get(V.t),
    ...M32,
    op.i64Mul,
    ...set(V.ad),
    ...get(V.m),
    ...M32,
    ...get(V.t),
    ...M32,
    op.i64Mul,
    ...set(V.bd),
    ...get(V.ad),
    ...get(V.m),
    ...M32,
    ...get(V.t),
    ...i64(32n),
    op.i64ShrU,
    op.i64Mul,
    op.i64Add,
    ...set(V.adbc),
    ...get(V.bd),
    ...get(V.adbc),
    ...i64(32n),
    op.i64Shl,
    op.i64Add,
    ...set(V.lo),
    ...get(V.m),
    ...i64(32n),
    op.i64ShrU,
    ...get(V.t),
    ...i64(32n),
    op.i64ShrU,
    op.i64Mul,
    ...get(V.adbc),
    ...i64(32n),
    op.i64ShrU,
    op.i64Add,
    ...get(V.adbc),
    ...get(V.ad),
    op.i64LtU,
    op.i64ExtendI32U,
    ...i64(32n),
    op.i64Shl,
    op.i64Add,
    ...get(V.lo),
    ...get(V.bd),
    op.i64LtU,
    op.i64ExtendI32U,
    op.i64Add,
    ...set(V.hi),
  ]
  const number = [
    ...get(V.x),
    op.f64Const,
    ...f64Bytes(0),
    op.f64Lt,
    op.if,
    EMPTY_BLOCK,
    ...put(i32(ch('-'))),
    ...get(V.x),
    op.f64Neg,
    ...set(V.x),
    op.end,
    ...failIf([
      ...get(V.x),
      op.f64Const,
      ...f64Bytes(PRINT_MIN),
      op.f64Ge,
      op.i32Eqz,
      ...get(V.x),
      op.f64Const,
      ...f64Bytes(PRINT_MAX),
      op.f64Lt,
      op.i32Eqz,
      op.i32Or,
    ]),
    ...get(V.x),
    op.i64ReinterpretF64,
    ...set(V.bits),
    ...get(V.bits),
    ...i64(52n),
    op.i64ShrU,
    op.i32WrapI64,
    ...i32(1075),
    op.i32Sub,
    ...set(V.e),
    ...get(V.bits),
    ...i64((1n << 52n) - 1n),
    op.i64And,
    ...i64(1n << 52n),
    op.i64Or,
    ...set(V.m),
    // floor((e + 52) log10 2) <= floor(log10 x) <= that + 1 (78913 / 2^18 ~ log10 2, as Ryu)
    ...get(V.e),
    ...i32(52),
    op.i32Add,
    ...i32(78913),
    op.i32Mul,
    ...i32(18),
    op.i32ShrS,
    ...set(V.E),
    op.loop,
    EMPTY_BLOCK,
    ...i32(PRINT_DIGITS - 1),
    ...get(V.E),
    op.i32Sub,
    ...set(V.q),
    ...failIf([...get(V.q), ...i32(0), op.i32LtS, ...get(V.q), ...i32(POW5_EXACT_MAX), op.i32GtS, op.i32Or]),
    ...get(P.tables),
    ...get(V.q),
    ...i32(3),
    op.i32Shl,
    op.i32Add,
    op.i64Load,
    ALIGN_8,
    ...uleb(POW5_EXACT_OFFSET),
    ...set(V.t),
    ...mul128,
    ...i32(0),
    ...get(V.e),
    ...get(V.q),
    op.i32Add,
    op.i32Sub,
    ...set(V.s),
    ...failIf([...get(V.s), ...i32(1), op.i32LtS, ...get(V.s), ...i32(63), op.i32GtS, op.i32Or]),
    // + 2^(s-1), then >> s: rounded half up
    ...i64(1n),
    ...get(V.s),
    ...i32(1),
    op.i32Sub,
    op.i64ExtendI32U,
    op.i64Shl,
    ...set(V.ad),
    ...get(V.lo),
    ...get(V.ad),
    op.i64Add,
    ...set(V.lo),
    ...get(V.hi),
    ...get(V.lo),
    ...get(V.ad),
    op.i64LtU,
    op.i64ExtendI32U,
    op.i64Add,
    ...set(V.hi),
    ...get(V.lo),
    ...get(V.s),
    op.i64ExtendI32U,
    op.i64ShrU,
    ...get(V.hi),
    ...i32(64),
    ...get(V.s),
    op.i32Sub,
    op.i64ExtendI32U,
    op.i64Shl,
    op.i64Or,
    ...set(V.D),
    ...get(V.D),
    ...i64(10n ** 17n),
    op.i64GeU,
    op.if,
    EMPTY_BLOCK,
    ...get(V.E),
    ...i32(1),
    op.i32Add,
    ...set(V.E),
    op.br,
    1,
    op.end,
    op.end,
    // The 17 digits into the scratch, first digit first: D = hi 10^8 + lo, hi = d 10^8 + mid (d the
    // first digit); mid and lo, 8 digits each, are turned into eight digit bytes at once (SWAR, as
    // in simdjson / fmt: two 4-digit lanes, then four 2-digit lanes, then eight 1-digit bytes, the
    // divisions by 100 and 10 done as multiply and shift, exact for these ranges) and stored as one
    // i64 each. n, the digits up to the last non-zero one, comes from the leading zero bytes of the
    // last i64 that has a non-zero digit. This replaced a loop of 17 divisions and byte stores and a
    // trailing-zero loop (printing was 1.9 µs for 50 scores, about 100 cycles a number).
    ...get(V.D),
    ...i64(DIGITS_SPLIT),
    op.i64DivU,
    op.i32WrapI64,
    ...set(V.k),
    ...get(V.D),
    op.i32WrapI64,
    ...get(V.k),
    ...i32(Number(DIGITS_SPLIT)),
    op.i32Mul,
    op.i32Sub,
    ...set(V.n),
    ...get(V.k),
    ...i32(Number(DIGITS_SPLIT)),
    op.i32DivU,
    ...set(V.s),
    ...get(P.tables),
    ...get(V.s),
    ...i32(ch('0')),
    op.i32Add,
    op.i32Store8,
    0,
    ...uleb(SCRATCH_OFFSET),
    ...get(V.k),
    ...get(V.s),
    ...i32(Number(DIGITS_SPLIT)),
    op.i32Mul,
    op.i32Sub,
    ...set(V.k),
    ...eightDigits(V.k, V.t, V.ad),
    ...set(V.hi),
    ...eightDigits(V.n, V.t, V.ad),
    ...set(V.lo),
    ...get(P.tables),
    ...get(V.hi),
    ...i64(ASCII_ZEROS),
    op.i64Add,
    op.i64Store,
    0,
    ...uleb(SCRATCH_OFFSET + 1),
    ...get(P.tables),
    ...get(V.lo),
    ...i64(ASCII_ZEROS),
    op.i64Add,
    op.i64Store,
    0,
    ...uleb(SCRATCH_OFFSET + 1 + LOW_DIGITS),
    ...i32(PRINT_DIGITS),
    ...get(V.lo),
    op.i64Clz,
    op.i32WrapI64,
    ...i32(3),
    op.i32ShrU,
    op.i32Sub,
    ...i32(PRINT_DIGITS - LOW_DIGITS),
    ...get(V.hi),
    op.i64Clz,
    op.i32WrapI64,
    ...i32(3),
    op.i32ShrU,
    op.i32Sub,
    ...get(V.lo),
    op.i64Eqz,
    op.i32Eqz,
    op.select,
    ...set(V.n),
    // Written with 8-byte copies that may run past the number (into the room after the text, the
    // next number or the closing bytes overwrite them); p then moves by the number's length.
    ...get(V.E),
    ...i32(0),
    op.i32GeS,
    op.if,
    EMPTY_BLOCK,
    // integer part: digits 0..E (the digits past n are zeros), then '.' and digits E+1..n-1 if any
    ...range(3).flatMap((w) => [
      ...get(V.p),
      ...get(P.tables),
      op.i64Load,
      0,
      ...uleb(SCRATCH_OFFSET + 8 * w),
      op.i64Store,
      0,
      ...uleb(8 * w),
    ]),
    ...get(V.p),
    ...get(V.E),
    op.i32Add,
    ...i32(ch('.')),
    op.i32Store8,
    0,
    1,
    ...range(2).flatMap((w) => [
      ...get(V.p),
      ...get(V.E),
      op.i32Add,
      ...get(P.tables),
      ...get(V.E),
      op.i32Add,
      op.i64Load,
      0,
      ...uleb(SCRATCH_OFFSET + 1 + 8 * w),
      op.i64Store,
      0,
      ...uleb(2 + 8 * w),
    ]),
    ...get(V.p),
    ...get(V.n),
    ...i32(1),
    op.i32Add,
    ...get(V.E),
    ...i32(1),
    op.i32Add,
    ...get(V.n),
    ...get(V.E),
    ...i32(1),
    op.i32Add,
    op.i32GtS,
    op.select,
    op.i32Add,
    ...set(V.p),
    op.else,
    // 0.(-E-1 zeros)digits: "0.000000" and "00000000", then the digits from p + 1 - E
    ...get(V.p),
    ...i64(ZERO_POINT),
    op.i64Store,
    0,
    0,
    ...get(V.p),
    ...i64(ASCII_ZEROS),
    op.i64Store,
    0,
    8,
    ...i32(1),
    ...get(V.E),
    op.i32Sub,
    ...get(V.p),
    op.i32Add,
    ...set(V.k),
    ...range(3).flatMap((w) => [
      ...get(V.k),
      ...get(P.tables),
      op.i64Load,
      0,
      ...uleb(SCRATCH_OFFSET + 8 * w),
      op.i64Store,
      0,
      ...uleb(8 * w),
    ]),
    ...get(V.k),
    ...get(V.n),
    op.i32Add,
    ...set(V.p),
    op.end,
  ]
  return [
    ...get(P.out),
    ...set(V.p),
    ...i32(0),
    ...set(V.j),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(V.j),
    ...get(P.count),
    op.i32GeS,
    op.brIf,
    1,
    ...get(V.j),
    op.if,
    EMPTY_BLOCK,
    ...put(i32(ch(','))),
    op.end,
    ...get(P.scores),
    ...get(V.j),
    ...i32(3),
    op.i32Shl,
    op.i32Add,
    ...f64Load(0),
    ...tee(V.x),
    op.f64Const,
    ...f64Bytes(0),
    op.f64Eq,
    op.if,
    EMPTY_BLOCK,
    ...put(i32(ch('0'))),
    op.else,
    // the answer writes NaN and infinities as JSON.stringify does (null); print leaves them to the caller
    ...(withOrder
      ? [
          ...get(V.x),
          ...get(V.x),
          op.f64Sub,
          op.f64Const,
          ...f64Bytes(0),
          op.f64Eq,
          op.i32Eqz,
          op.if,
          EMPTY_BLOCK,
          ...[...'null'].flatMap((c) => put(i32(ch(c)))),
          op.else,
        ]
      : []),
    ...number,
    ...(withOrder ? [op.end] : []),
    op.end,
    ...get(V.j),
    ...i32(1),
    op.i32Add,
    ...set(V.j),
    op.br,
    0,
    op.end,
    op.end,
    ...(withOrder ? orderBody(P, V, put) : []),
    ...get(V.p),
    ...get(P.out),
    op.i32Sub,
    op.end,
  ]
}

/**
 * The answer's tail after the printed scores: `],"order":[i,...]}`, the candidate indices best
 * first (bestFirst's order in rows-json.ts: higher score first, equal scores in index order, NaN
 * last in index order), by a stable insertion sort on integer keys in `work` (8 bytes a key, then
 * 4 an index): a score's key is its float64 bits turned so that unsigned integer order is the
 * descending score order (-0 first made +0, every NaN the largest key). Only for counts up to
 * ANSWER_SORT_MAX (the caller checks); the indices are written in decimal.
 */
function orderBody(
  P: {scores: number; count: number; work: number},
  V: {j: number; k: number; n: number; q: number; p: number; m: number; t: number; x: number},
  put: (byte: number[]) => number[],
): number[] {
  const SIGN_CLEAR = (1n << 63n) - 1n
  const keyAt = (i: number): number[] => [...get(P.work), ...get(i), ...i32(3), op.i32Shl, op.i32Add]
  // the indices after count keys
  const indexAt = (i: number): number[] => [...get(V.q), ...get(i), ...i32(2), op.i32Shl, op.i32Add]
  return [
    ...[...'],"order":['].flatMap((c) => put(i32(ch(c)))),
    ...get(P.work),
    ...get(P.count),
    ...i32(3),
    op.i32Shl,
    op.i32Add,
    ...set(V.q),
    ...i32(0),
    ...set(V.j),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK, // insert candidate j into keys[0..j)
    ...get(V.j),
    ...get(P.count),
    op.i32GeS,
    op.brIf,
    1,
    ...get(P.scores),
    ...get(V.j),
    ...i32(3),
    op.i32Shl,
    op.i32Add,
    ...f64Load(0),
    op.f64Const,
    ...f64Bytes(0),
    op.f64Add,
    ...tee(V.x),
    op.i64ReinterpretF64,
    ...tee(V.m),
    ...get(V.m),
    ...i64(63n),
    op.i64ShrS,
    ...i64(-1n),
    op.i64Xor,
    ...i64(SIGN_CLEAR),
    op.i64And,
    op.i64Xor,
    ...i64(-1n),
    ...get(V.x),
    ...get(V.x),
    op.f64Eq,
    op.select,
    ...set(V.m),
    ...get(V.j),
    ...set(V.k),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK, // move greater keys up one place
    ...get(V.k),
    op.i32Eqz,
    op.brIf,
    1,
    ...keyAt(V.k),
    ...i32(8),
    op.i32Sub,
    op.i64Load,
    ALIGN_8,
    0,
    ...tee(V.t),
    ...get(V.m),
    op.i64LeU,
    op.brIf,
    1,
    ...keyAt(V.k),
    ...get(V.t),
    op.i64Store,
    ALIGN_8,
    0,
    ...indexAt(V.k),
    ...indexAt(V.k),
    ...i32(4),
    op.i32Sub,
    op.i32Load,
    ALIGN_4,
    0,
    op.i32Store,
    ALIGN_4,
    0,
    ...get(V.k),
    ...i32(1),
    op.i32Sub,
    ...set(V.k),
    op.br,
    0,
    op.end,
    op.end,
    ...keyAt(V.k),
    ...get(V.m),
    op.i64Store,
    ALIGN_8,
    0,
    ...indexAt(V.k),
    ...get(V.j),
    op.i32Store,
    ALIGN_4,
    0,
    ...get(V.j),
    ...i32(1),
    op.i32Add,
    ...set(V.j),
    op.br,
    0,
    op.end,
    op.end,
    // the indices in decimal: n digits, written last first
    ...i32(0),
    ...set(V.j),
    op.block,
    EMPTY_BLOCK,
    op.loop,
    EMPTY_BLOCK,
    ...get(V.j),
    ...get(P.count),
    op.i32GeS,
    op.brIf,
    1,
    ...get(V.j),
    op.if,
    EMPTY_BLOCK,
    ...put(i32(ch(','))),
    op.end,
    ...indexAt(V.j),
    op.i32Load,
    ALIGN_4,
    0,
    ...tee(V.k),
    ...set(V.n),
    op.loop,
    EMPTY_BLOCK,
    ...get(V.p),
    ...i32(1),
    op.i32Add,
    ...set(V.p),
    ...get(V.n),
    ...i32(10),
    op.i32DivU,
    ...tee(V.n),
    op.brIf,
    0,
    op.end,
    ...get(V.p),
    ...set(V.n),
    op.loop,
    EMPTY_BLOCK,
    ...get(V.n),
    ...i32(1),
    op.i32Sub,
    ...tee(V.n),
    ...get(V.k),
    ...i32(10),
    op.i32RemU,
    ...i32(ch('0')),
    op.i32Add,
    op.i32Store8,
    0,
    0,
    ...get(V.k),
    ...i32(10),
    op.i32DivU,
    ...tee(V.k),
    op.brIf,
    0,
    op.end,
    ...get(V.j),
    ...i32(1),
    op.i32Add,
    ...set(V.j),
    op.br,
    0,
    op.end,
    op.end,
    ...put(i32(ch(']'))),
    ...put(i32(ch('}'))),
  ]
}

/**
 * Which SIMD reader should try `body` (each indexes the whole body before it meets a value it
 * cannot read), judged from its first value that is not null, from `at` (the first row's '['): LONG_FORM plus ws
 * when that value is longer than the compact reader reads (full-precision doubles: the long
 * reader), else ws (the compact reader); ws is 1 when whitespace precedes the first value or
 * follows its separator (", " as Python's json.dumps prints), 0 when not. Only a guess: the
 * readers check everything either way.
 */
const LONG_FORM = 2
/** Leading nulls bodyForm steps over to find the first number. */
const NULLS_SKIPPED_MAX = 64
function bodyForm(body: Uint8Array, at: number): number {
  const isWs = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
  let i = at + 1
  let ws = 0
  while (i < body.length && isWs(body[i])) i++
  if (i > at + 1) ws = 1
  let c = 0
  // nulls tell nothing about the numbers' form: judge by the first value that is not one (in the first row)
  for (
    let k = 0;
    k < NULLS_SKIPPED_MAX &&
    i + 4 < body.length &&
    body[i] === 0x6e &&
    body[i + 1] === 0x75 &&
    body[i + 2] === 0x6c &&
    body[i + 3] === 0x6c &&
    body[i + 4] === 0x2c;
    k++
  ) {
    i += 5
    if (i < body.length && isWs(body[i])) ws = 1
    while (i < body.length && isWs(body[i])) i++
  }
  const start = i
  while (i < body.length && (c = body[i]) !== 0x2c && c !== 0x5d && i - start <= FAST_LENGTH_MAX) i++
  if (ws === 0 && i < body.length && i - start <= FAST_LENGTH_MAX && i + 1 < body.length && isWs(body[i + 1])) ws = 1
  if (i - start > FAST_LENGTH_MAX) {
    // the long value's separator, for the whitespace after it
    while (i < body.length && (c = body[i]) !== 0x2c && c !== 0x5d) i++
    if (i + 1 < body.length && isWs(body[i + 1])) ws = 1
    return LONG_FORM + ws
  }
  return ws
}

let kernel: {bytes: Uint8Array; module: WasmModule} | undefined
/** The kernel's bytes and compiled module, built once per process. */
export function wasmKernel(): {bytes: Uint8Array; module: WasmModule} {
  if (!kernel) {
    const bytes = kernelBytes()
    kernel = {bytes, module: new WebAssembly.Module(bytes)}
  }
  return kernel
}

/** The part of the WebAssembly JS API used here (Node's global; not in the project's TypeScript libs). */
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
interface WasmModule {
  readonly compiled: unique symbol
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule
  Instance: new (
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => {exports: Record<string, unknown>}
  Memory: new (descriptor: {initial: number}) => WasmMemory
}
const WebAssembly = (globalThis as unknown as {WebAssembly: WasmApi}).WebAssembly

type ScoreFn = (
  rows: number,
  count: number,
  stride: number,
  out: number,
  groups: number,
  groupsEnd: number,
  values: number,
) => void
type ReadFn = (at: number, last: number, out: number, width: number, maxRows: number, pow10: number) => number
type ReadCompactFn = (
  at: number,
  last: number,
  out: number,
  width: number,
  maxRows: number,
  table: number,
  tape: number,
  ws: number,
) => number
type ReadLongFn = (
  at: number,
  last: number,
  out: number,
  width: number,
  maxRows: number,
  table: number,
  tape: number,
  ws: number,
  pow: number,
) => number
type PrintFn = (scores: number, count: number, out: number, tables: number, work: number) => number
/** Bytes a printed score takes at most: '-', "0.", 8 zeros, 17 digits, ','. */
const PRINTED_BYTES = 32
/** How far the printer's 8-byte copies may write past a number's end (a sign, "0." and 8 zeros, 24 bytes of digits). */
const PRINT_OVERRUN_BYTES = 40
/** The answer's bytes besides its prefix, scores and indices: `],"order":[` and `]}`. */
const ANSWER_FIXED_BYTES = 13
/** Bytes of sort keys and indices per candidate in the answer's work area. */
const ANSWER_WORK_BYTES = 12
/**
 * Candidates the module orders itself (an insertion sort, O(n^2)); more go to bestFirst in JS.
 * Measured at 50: 1.8 µs for bestFirst, 0.4 µs in the module.
 */
export const ANSWER_SORT_MAX = 64

/**
 * A request body being written into the module's memory as it arrives (WasmEnsemble.claimBody or
 * claimRows): where, how long, and the memory's epoch when claimed. It stays good while nothing
 * else writes the body or rows area, lays the memory out again or grows it (each of those moves
 * the epoch on); the caller keeps the body's chunks and reads them as before when it is not.
 */
export interface MemoryClaim {
  readonly kind: 'body' | 'rows'
  readonly at: number
  readonly length: number
  readonly epoch: number
  /** Candidates: the rows reader's maxRows (body), or the rows (rows). */
  readonly count: number
}

export class WasmEnsemble {
  readonly width: number
  readonly trees: number
  private readonly memory: WasmMemory
  private readonly kernel: ScoreFn
  private readonly reader: ReadFn
  private readonly compactReader: ReadCompactFn
  private readonly longReader: ReadLongFn
  private readonly infinite: (at: number, end: number) => number
  /** The long reader's swizzle table (after the compact reader's). */
  private readonly longTableAt: number
  /** The compact reader's value table, and its separator positions (after the printed scores). */
  private readonly compactTableAt: number
  private tapeAt = 0
  /** Which reader answered the last readJsonRows that got past the frame (tests check that compact bodies take the compact one). */
  lastReader: 'compact' | 'long' | 'general' | undefined
  private readonly printer: PrintFn
  private readonly answerer: PrintFn
  /** The printed scores (after the body and the answer's prefix) and a byte view of the whole memory for reading them. */
  private textAt = 0
  /** Room for the answer's prefix `{"model":VERSION,"scores":[` just before textAt, and the sort's work area after the text. */
  private prefixCapacity = 0
  private workAt = 0
  /** The prefix bytes of answerJson's last version, and where they were last written (-1: not since the last layout). */
  private answerVersion: string | undefined
  private answerPrefix = Buffer.alloc(0)
  private answerAscii = true
  private prefixAt = -1
  private bytes = Buffer.alloc(0)
  /** 10^0 .. 10^22 as float64, for the rows reader. */
  private readonly pow10At: number
  private readonly baseFeature: number
  private readonly baseWeight: number
  private readonly valuesAt: number
  private readonly groupsAt: number
  private readonly groupsEnd: number
  /** Where the variable part (out, then rows) starts. */
  private readonly tailAt: number
  private capacity = 0
  private outAt = 0
  private rowsAt = 0
  private outView = new Float64Array(0)
  private rowsView = new Float64Array(0)
  /** Room for a request body after the rows (the rows reader's input). */
  private bodyAt = 0
  private bodyCapacity = 0
  /** Moves on whenever the body or rows area is written or the memory is laid out again (MemoryClaim). */
  private epoch = 0
  /** The epoch of the claim being written (-1: none): one body streams in at a time. */
  private claimed = -1

  constructor(packed: PackedEnsemble) {
    this.width = packed.width
    this.trees = packed.roots.length
    this.baseFeature = packed.baseFeature
    this.baseWeight = packed.baseWeight
    const nodes = packed.feature.length
    const pad = nodes
    const groups = Math.ceil(this.trees / LANES)
    this.valuesAt = (nodes + 1) * NODE_BYTES
    this.groupsAt = this.valuesAt + (nodes + 1) * 8
    this.groupsEnd = this.groupsAt + groups * GROUP_BYTES
    this.pow10At = Math.ceil(this.groupsEnd / 8) * 8
    this.compactTableAt = this.pow10At + SCRATCH_OFFSET + SCRATCH_BYTES
    this.longTableAt = this.compactTableAt + FAST_TABLE_BYTES
    this.tailAt = this.longTableAt + LONG_TABLE_BYTES
    this.memory = new WebAssembly.Memory({initial: Math.ceil(this.tailAt / WASM_PAGE) + 1})
    const view = new DataView(this.memory.buffer)
    for (let n = 0; n <= nodes; n++) {
      const leaf = n === pad || Number.isNaN(packed.threshold[n])
      view.setFloat64(n * NODE_BYTES, leaf ? Number.NaN : packed.threshold[n], true)
      view.setInt32(n * NODE_BYTES + 8, leaf ? (n - 1) * NODE_BYTES : packed.left[n] * NODE_BYTES, true)
      view.setInt32(n * NODE_BYTES + 12, leaf ? 0 : packed.feature[n] * 8, true)
      view.setFloat64(this.valuesAt + n * 8, n === pad ? -0 : packed.value[n], true)
    }
    for (let g = 0; g < groups; g++) {
      let steps = 1
      for (let l = 0; l < LANES; l++) {
        const t = g * LANES + l
        view.setInt32(
          this.groupsAt + g * GROUP_BYTES + 4 * l,
          t < this.trees ? packed.roots[t] * NODE_BYTES : pad * NODE_BYTES,
          true,
        )
        if (t < this.trees) steps = Math.max(steps, packed.depth[t])
      }
      view.setInt32(this.groupsAt + g * GROUP_BYTES + 4 * LANES, steps, true)
    }
    for (let k = 0; k <= MAX_EXACT_POW10; k++) view.setFloat64(this.pow10At + k * 8, 10 ** k, true)
    for (let k = 0; k <= POW10_INT_MAX; k++)
      view.setBigInt64(this.pow10At + POW10_INT_OFFSET + k * 8, 10n ** BigInt(k), true)
    const pow5 = powersOfFive()
    for (let k = 0; k < pow5.length; k++) view.setBigUint64(this.pow10At + POW5_OFFSET + k * 8, pow5[k], true)
    for (let k = 0; k <= POW5_EXACT_MAX; k++)
      view.setBigUint64(this.pow10At + POW5_EXACT_OFFSET + k * 8, 5n ** BigInt(k), true)
    new Uint8Array(this.memory.buffer, this.compactTableAt, FAST_TABLE_BYTES).set(fastTable())
    new Uint8Array(this.memory.buffer, this.longTableAt, LONG_TABLE_BYTES).set(longTable())
    const instance = new WebAssembly.Instance(wasmKernel().module, {env: {memory: this.memory}})
    this.kernel = instance.exports.score as ScoreFn
    this.reader = instance.exports.read as ReadFn
    this.compactReader = instance.exports.readCompact as ReadCompactFn
    this.longReader = instance.exports.readLong as ReadLongFn
    this.infinite = instance.exports.infinite as (at: number, end: number) => number
    this.printer = instance.exports.print as PrintFn
    this.answerer = instance.exports.answer as PrintFn
    this.reserve(INITIAL_CAPACITY)
  }

  /** Lays out room for `count` candidates and a body of `bodyBytes` (growing the memory when needed; old views are dropped). */
  private reserve(count: number, bodyBytes = 0, prefixBytes = 0): void {
    if (
      count <= this.capacity &&
      bodyBytes <= this.bodyCapacity &&
      prefixBytes <= this.prefixCapacity &&
      this.outView.buffer === this.memory.buffer
    )
      return
    const capacity = Math.max(count, this.capacity)
    const bodyCapacity = Math.max(bodyBytes, this.bodyCapacity)
    this.prefixCapacity = Math.max(prefixBytes, this.prefixCapacity)
    this.prefixAt = -1
    this.outAt = this.tailAt
    this.rowsAt = this.outAt + (capacity + 1) * 8
    this.bodyAt = this.rowsAt + capacity * this.width * 8
    this.textAt = this.bodyAt + bodyCapacity + this.prefixCapacity
    // scores, then `],"order":[`, each index with its comma, `]}`
    const indexBytes = String(Math.max(0, capacity - 1)).length + 1
    this.workAt =
      Math.ceil(
        (this.textAt + capacity * (PRINTED_BYTES + indexBytes) + ANSWER_FIXED_BYTES + PRINT_OVERRUN_BYTES) / 8,
      ) * 8
    // the compact reader's separator positions: one per body byte at most, and FAST_WRITES written past the last
    this.tapeAt = this.workAt + capacity * ANSWER_WORK_BYTES
    const end = this.tapeAt + 4 * (bodyCapacity + FAST_WRITES)
    const have = this.memory.buffer.byteLength
    if (end > have) this.memory.grow(Math.ceil((end - have) / WASM_PAGE))
    this.epoch++
    this.capacity = capacity
    this.bodyCapacity = bodyCapacity
    this.outView = new Float64Array(this.memory.buffer, this.outAt, capacity + 1)
    this.bytes = Buffer.from(this.memory.buffer)
    this.rowsView = new Float64Array(this.memory.buffer, this.rowsAt, capacity * this.width)
  }

  /**
   * Reads the rows of a `{"features": [[...], ...]}` body (at most maxRows) into the input buffer
   * with the module's rows reader: the number of rows, or FALLBACK when the body is not in the fast
   * form of rows-json.ts (then parse it with JSON.parse; the answer is the same).
   */
  readJsonRows(body: Uint8Array, maxRows: number, reader: 'any' | 'general' = 'any'): number {
    const frame = rowsFrame(body)
    if (frame === undefined || maxRows < 1) return FALLBACK
    // spare bytes: the readers load 8, 16 or 64 at a time (they only use those before the closing brace)
    this.reserve(maxRows, body.length + FAST_BODY_SLACK)
    // a body already in place (readClaimedRows) is not copied onto itself
    if (body.buffer !== this.memory.buffer || body.byteOffset !== this.bodyAt) {
      this.epoch++
      this.bytes.set(body, this.bodyAt)
    }
    const at = this.bodyAt + frame.at
    const last = this.bodyAt + frame.last
    const form = reader === 'general' ? -1 : bodyForm(body, frame.at)
    let rows = NOT_COMPACT
    if (form >= LONG_FORM) {
      rows = this.longReader(
        at,
        last,
        this.rowsAt,
        this.width,
        maxRows,
        this.longTableAt,
        this.tapeAt,
        form - LONG_FORM,
        this.pow10At,
      )
      this.lastReader = 'long'
    } else if (form >= 0) {
      rows = this.compactReader(at, last, this.rowsAt, this.width, maxRows, this.compactTableAt, this.tapeAt, form)
      this.lastReader = 'compact'
    }
    if (rows !== NOT_COMPACT) return rows
    this.lastReader = 'general'
    rows = this.reader(at, last, this.rowsAt, this.width, maxRows, this.pow10At)
    return rows < 0 ? FALLBACK : rows
  }

  /**
   * The input buffer for `count` candidates' rows (row-major, `width` values each): write them
   * here, then call scoreInput(count). Valid until the next input() with a larger count.
   */
  input(count: number): Float64Array {
    this.reserve(count)
    this.epoch++
    return this.rowsView
  }

  /** The input buffer for `count` candidates as bytes (float64 little-endian rows), for copying rows in byte for byte. */
  inputBytes(count: number): Uint8Array {
    this.reserve(count)
    this.epoch++
    return this.bytes.subarray(this.rowsAt, this.rowsAt + count * this.width * 8)
  }

  /**
   * Claims the body area for a JSON body of `length` bytes whose chunks the caller writes with
   * writeClaimed as they arrive (read then with readClaimedRows, maxRows as readJsonRows'), or
   * undefined while another claim is open. Release it with release() whatever happens.
   */
  claimBody(length: number, maxRows: number): MemoryClaim | undefined {
    if (this.claimed >= 0 || length < 1 || maxRows < 1) return undefined
    this.reserve(maxRows, length + FAST_BODY_SLACK)
    this.claimed = ++this.epoch
    return {kind: 'body', at: this.bodyAt, length, epoch: this.claimed, count: maxRows}
  }

  /** Claims the input rows for `count` candidates sent as float64 little-endian rows (scoreInput(count) once they are in), as claimBody. */
  claimRows(count: number): MemoryClaim | undefined {
    if (this.claimed >= 0 || count < 1) return undefined
    this.reserve(count)
    this.claimed = ++this.epoch
    return {kind: 'rows', at: this.rowsAt, length: count * this.width * 8, epoch: this.claimed, count}
  }

  /** Whether the claim still holds: nothing else wrote its area or moved the memory since. */
  holds(claim: MemoryClaim): boolean {
    return claim.epoch === this.epoch && claim.epoch === this.claimed
  }

  /** Writes a chunk of the claimed body at `offset`; false (nothing written) when the claim no longer holds or the chunk does not fit. */
  writeClaimed(claim: MemoryClaim, chunk: Uint8Array, offset: number): boolean {
    if (!this.holds(claim) || offset + chunk.length > claim.length) return false
    this.bytes.set(chunk, claim.at + offset)
    return true
  }

  /** Ends a claim (a no-op for one already ended). */
  release(claim: MemoryClaim): void {
    if (this.claimed === claim.epoch) this.claimed = -1
  }

  /** The claimed area's bytes (a view into the memory, valid until the memory is next laid out). */
  claimedBytes(claim: MemoryClaim): Uint8Array {
    return this.bytes.subarray(claim.at, claim.at + claim.length)
  }

  /** readJsonRows of a claimed body written whole (the caller checks holds() and the length), without copying it. */
  readClaimedRows(claim: MemoryClaim, reader: 'any' | 'general' = 'any'): number {
    if (claim.kind !== 'body' || !this.holds(claim))
      throw new RangeError('WasmEnsemble.readClaimedRows: the claim no longer holds')
    return this.readJsonRows(this.bytes.subarray(claim.at, claim.at + claim.length), claim.count, reader)
  }

  /**
   * The index (row-major) of the first +-Infinity among the first `count` rows of the input
   * buffer, or -1 when there is none (NaN, a missing value, is not one). Checked by the module in
   * a fraction of a microsecond; the index is looked for only when there is one.
   */
  firstInfinite(count: number): number {
    if (count > this.capacity)
      throw new RangeError(
        `WasmEnsemble.firstInfinite: ${count} candidates, but input() made room for ${this.capacity}`,
      )
    const values = count * this.width
    if (this.infinite(this.rowsAt, this.rowsAt + values * 8) === 0) return -1
    const rows = this.rowsView
    for (let i = 0; i < values; i++) if (rows[i] === Infinity || rows[i] === -Infinity) return i
    return -1
  }

  /** Scores the first `count` rows of the input buffer; the result is valid until the next call. */
  scoreInput(count: number): Float64Array {
    if (count > this.capacity)
      throw new RangeError(`WasmEnsemble.scoreInput: ${count} candidates, but input() made room for ${this.capacity}`)
    const out = this.outView
    const rows = this.rowsView
    const width = this.width
    if (this.baseFeature >= 0)
      for (let d = 0; d < count; d++) out[d] = this.baseWeight * rows[d * width + this.baseFeature]
    else out.fill(0, 0, count)
    if (this.trees > 0) {
      for (let from = 0; from < count; from += CANDIDATE_BLOCK) {
        this.kernel(
          this.rowsAt + from * width * 8,
          Math.min(CANDIDATE_BLOCK, count - from),
          width * 8,
          this.outAt + from * 8,
          this.groupsAt,
          this.groupsEnd,
          this.valuesAt,
        )
      }
    }
    return out.subarray(0, count)
  }

  /**
   * The first `count` scores of the last scoreInput() as JSON numbers joined by commas, printed by
   * the module (17 significant digits, the same float64 when read back), or undefined when one is
   * outside what the module prints (|x| below 1e-9 or from 1e15, NaN, infinite).
   */
  printScores(count: number): string | undefined {
    const length = this.printer(this.outAt, count, this.textAt, this.pow10At, 0)
    return length < 0 ? undefined : this.bytes.toString('latin1', this.textAt, this.textAt + length)
  }

  /**
   * The whole POST /rerank answer for the first `count` scores of the last scoreInput(), written
   * by the module in one pass: rerankAnswerJson(version, scores, bestFirst(scores), printScores())
   * to the byte (property-tested), one string made from its memory. Undefined when a score is
   * outside what the module prints (see printScores) or count > ANSWER_SORT_MAX: then build it in JS.
   */
  answerJson(count: number, version: string): string | undefined {
    if (count < 1 || count > ANSWER_SORT_MAX || count > this.capacity) return undefined
    if (version !== this.answerVersion) {
      const prefix = `{"model":${JSON.stringify(version)},"scores":[`
      this.answerPrefix = Buffer.from(prefix, 'utf8')
      this.answerAscii = this.answerPrefix.length === prefix.length
      this.answerVersion = version
      this.prefixAt = -1
    }
    const prefix = this.answerPrefix
    this.reserve(count, 0, prefix.length)
    const start = this.textAt - prefix.length
    if (this.prefixAt !== start) {
      this.bytes.set(prefix, start)
      this.prefixAt = start
    }
    const length = this.answerer(this.outAt, count, this.textAt, this.pow10At, this.workAt)
    return length < 0
      ? undefined
      : this.bytes.toString(this.answerAscii ? 'latin1' : 'utf8', start, this.textAt + length)
  }

  /** Scores `count` row-major candidates of `rows` into `out` (as PackedEnsemble.scoreAll). */
  scoreAll(rows: Float64Array, count: number, out: Float64Array): Float64Array {
    this.input(count).set(rows.subarray(0, count * this.width))
    out.set(this.scoreInput(count))
    return out
  }
}
