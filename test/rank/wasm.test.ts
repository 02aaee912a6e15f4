import fc from 'fast-check'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {randomCompleteTree} from '../../src/rank/bench.js'
import type {LambdaMartModel} from '../../src/rank/lambdamart.js'
import {fromSavedModel, readModel, toSavedModel} from '../../src/rank/model.js'
import {PackedEnsemble} from '../../src/rank/packed.js'
import type {RegressionTree} from '../../src/rank/tree.js'
import {bestFirst, rerankAnswerJson} from '../../src/rank/rows-json.js'
import {ANSWER_SORT_MAX, WasmEnsemble, wasmKernel} from '../../src/rank/wasm.js'
import {InputError} from '../../src/util/errors.js'
import {Rng} from '../../src/util/rng.js'

/** Values where comparisons are delicate: equal to a threshold, signed zeros, infinities, NaN. */
const EDGE = [0, -0, 0.5, -0.5, 1, 1e-300, -1e300, Number.MAX_VALUE, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]
const finite = fc.oneof(
  fc.constantFrom(0, -0, 0.5, -0.5, 1, 1e-300, -1e300, Number.MAX_VALUE),
  fc.double({noNaN: true, noDefaultInfinity: true}),
)
const input = fc.oneof(fc.constantFrom(...EDGE, Number.NaN), fc.double())

/** A tree grown by splitting leaves in the order given (the LightGBM layout the trainer writes). */
function growTree(
  splits: {leaf: number; feature: number; threshold: number}[],
  values: number[],
  width: number,
): RegressionTree {
  const splitFeature: number[] = []
  const threshold: number[] = []
  const left: number[] = []
  const right: number[] = []
  // where each leaf hangs: [internal node, side] (root leaf: none)
  const parentOf: Array<[number, 'l' | 'r'] | null> = [null]
  for (const s of splits) {
    const leaf = s.leaf % parentOf.length
    const node = splitFeature.length
    const fresh = parentOf.length
    splitFeature.push(s.feature % width)
    threshold.push(s.threshold)
    left.push(~leaf)
    right.push(~fresh)
    const parent = parentOf[leaf]
    if (parent) (parent[1] === 'l' ? left : right)[parent[0]] = node
    parentOf[leaf] = [node, 'l']
    parentOf.push([node, 'r'])
  }
  const leafValue = Float64Array.from({length: parentOf.length}, (_, i) => values[i % values.length])
  return {
    splitFeature: Int32Array.from(splitFeature),
    threshold: Float64Array.from(threshold),
    left: Int32Array.from(left),
    right: Int32Array.from(right),
    gain: new Float64Array(splitFeature.length),
    leafValue,
  }
}

function expectIdentical(a: Float64Array, b: Float64Array): void {
  expect(a.length).toBe(b.length)
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) expect({i, wasm: a[i]}).toEqual({i, wasm: b[i]})
}

describe('WasmEnsemble', () => {
  it('scores exactly like the packed walk (bit for bit) on random models and inputs', () => {
    const model = fc.record({
      width: fc.integer({min: 1, max: 7}),
      trees: fc.array(
        fc.record({
          splits: fc.array(fc.record({leaf: fc.nat(), feature: fc.nat(), threshold: finite}), {maxLength: 24}),
          values: fc.array(finite, {minLength: 1, maxLength: 6}),
        }),
        {maxLength: 11},
      ),
      base: fc.option(fc.record({feature: fc.nat(), weight: finite})),
    })
    fc.assert(
      fc.property(
        model,
        fc.array(input, {minLength: 1, maxLength: 200}),
        fc.integer({min: 1, max: 9}),
        (m, values, count) => {
          const names = Array.from({length: m.width}, (_, i) => `f${i}`)
          const lm: LambdaMartModel = {
            featureNames: names,
            trees: m.trees.map((t) => growTree(t.splits, t.values, m.width)),
            ...(m.base ? {base: {feature: m.base.feature % m.width, weight: m.base.weight}} : {}),
          }
          const rows = Float64Array.from({length: count * m.width}, (_, i) => values[i % values.length])
          const packed = new PackedEnsemble(lm)
          expectIdentical(
            new WasmEnsemble(packed).scoreAll(rows, count, new Float64Array(count)),
            packed.scoreAll(rows, count, new Float64Array(count)),
          )
        },
      ),
      {numRuns: 300, seed: 42},
    )
  })

  it('walks 100 complete depth-6 trees over 46 features exactly, growing its memory for more candidates and reusing it for fewer', () => {
    const rng = new Rng(5)
    const lm = {
      featureNames: Array.from({length: 46}, (_, i) => `f${i}`),
      trees: Array.from({length: 100}, () => randomCompleteTree(6, 46, rng)),
    }
    const packed = new PackedEnsemble(lm)
    const wasm = new WasmEnsemble(packed)
    for (const count of [50, 1, 3000, 7, 50]) {
      const rows = Float64Array.from({length: count * 46}, () => rng.next())
      expectIdentical(
        wasm.scoreAll(rows, count, new Float64Array(count)),
        packed.scoreAll(rows, count, new Float64Array(count)),
      )
    }
    // rows written straight into the input buffer
    const rows = Float64Array.from({length: 20 * 46}, () => rng.next())
    wasm.input(20).set(rows)
    expectIdentical(Float64Array.from(wasm.scoreInput(20)), packed.scoreAll(rows, 20, new Float64Array(20)))
    expect(() => wasm.scoreInput(1_000_000)).toThrow(RangeError)
  })

  it('walks groups whose trees have odd and even depths (an odd step, then two per iteration) exactly, NaN features going right', () => {
    const rng = new Rng(11)
    // depths 1..7 and back, so every group of four mixes depths and some leaves loop for several steps
    const depths = [1, 2, 3, 4, 5, 6, 7, 6, 5, 4, 3, 2, 1, 7, 2]
    const lm = {
      featureNames: Array.from({length: 9}, (_, i) => `f${i}`),
      trees: depths.map((d) => randomCompleteTree(d, 9, rng)),
    }
    const packed = new PackedEnsemble(lm)
    const wasm = new WasmEnsemble(packed)
    for (const count of [1, 2, 7, 49, 65]) {
      const rows = Float64Array.from({length: count * 9}, () => (rng.next() < 0.1 ? Number.NaN : rng.next()))
      expectIdentical(
        wasm.scoreAll(rows, count, new Float64Array(count)),
        packed.scoreAll(rows, count, new Float64Array(count)),
      )
    }
  })

  it('scores a model without trees as its base term and a single-leaf tree as its leaf', () => {
    const stump: RegressionTree = {
      splitFeature: new Int32Array(0),
      threshold: new Float64Array(0),
      left: new Int32Array(0),
      right: new Int32Array(0),
      gain: new Float64Array(0),
      leafValue: Float64Array.of(0.25),
    }
    expect(
      Array.from(
        new WasmEnsemble(new PackedEnsemble({featureNames: ['a'], trees: [stump]})).scoreAll(
          Float64Array.of(3, 4),
          2,
          new Float64Array(2),
        ),
      ),
    ).toEqual([0.25, 0.25])
    expect(
      Array.from(
        new WasmEnsemble(
          new PackedEnsemble({featureNames: ['a', 'b'], trees: [], base: {feature: 1, weight: 2}}),
        ).scoreAll(Float64Array.of(3, 4, 5, -0), 2, new Float64Array(2)),
      ),
    ).toEqual([8, -0])
    // -0 + -0 stays -0: the padding of a group of trees must not turn it into +0
    const negativeZero = {...stump, leafValue: Float64Array.of(-0)}
    const signed = new WasmEnsemble(
      new PackedEnsemble({featureNames: ['a'], trees: [negativeZero], base: {feature: 0, weight: 1}}),
    ).scoreAll(Float64Array.of(-0), 1, new Float64Array(1))
    expect(Object.is(signed[0], -0)).toBe(true)
  })
})

describe('WasmEnsemble.firstInfinite', () => {
  it('finds the first +-Infinity of the input rows (NaN of any payload is none), for any count and width', () => {
    const bits = fc.bigInt({min: 0n, max: (1n << 64n) - 1n})
    const special = fc.constantFrom(
      0x7ff0_0000_0000_0000n,
      0xfff0_0000_0000_0000n,
      0x7ff0_0000_0000_0001n,
      0xfff8_0000_0000_0000n,
      0x7fef_ffff_ffff_ffffn,
      0x8000_0000_0000_0000n,
    )
    const models = new Map<number, WasmEnsemble>()
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 47}),
        fc.integer({min: 1, max: 70}),
        fc.array(fc.tuple(fc.nat(), fc.oneof(bits, special)), {maxLength: 4}),
        (width, count, placed) => {
          let wasm = models.get(width)
          if (!wasm)
            models.set(
              width,
              (wasm = new WasmEnsemble(
                new PackedEnsemble({featureNames: Array.from({length: width}, (_, i) => `f${i}`), trees: []}),
              )),
            )
          // a larger request first: values past `count` rows are left in the buffer and must not count
          new BigUint64Array(wasm.input(count + 2).buffer, wasm.input(count + 2).byteOffset, (count + 2) * width).fill(
            0x7ff0_0000_0000_0000n,
          )
          const rows = wasm.input(count)
          const words = new BigUint64Array(rows.buffer, rows.byteOffset, count * width)
          words.fill(0x3ff0_0000_0000_0000n)
          for (const [at, b] of placed) words[at % (count * width)] = b
          const expected = Array.from(rows.subarray(0, count * width)).findIndex(
            (v) => v === Infinity || v === -Infinity,
          )
          expect(wasm.firstInfinite(count)).toBe(expected)
        },
      ),
      {numRuns: 400, seed: 42},
    )
  })
})

describe('WasmEnsemble.printScores', () => {
  it('prints scores that read back as the same float64 (17 digits from exact integer arithmetic), or leaves them to String', () => {
    const wasm = new WasmEnsemble(new PackedEnsemble({featureNames: ['a'], trees: []}))
    let printed = 0
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            {
              arbitrary: fc.double({min: 1e-9, max: 1e15, noNaN: true}).chain((v) => fc.constantFrom(v, -v)),
              weight: 10,
            },
            {arbitrary: fc.integer({min: -1e6, max: 1e6}).map((k) => k / 1024), weight: 10},
            {arbitrary: fc.double({min: -3, max: 3, noNaN: true}), weight: 1},
            {
              arbitrary: fc.constantFrom(0, -0, 1e-9, -1e-9, 999999999999999.9, 0.1, 2 ** -29, 1e-10, 1e15, Number.NaN),
              weight: 1,
            },
          ),
          {minLength: 1, maxLength: 60},
        ),
        (xs) => {
          wasm.input(xs.length)
          const out = wasm.scoreInput(xs.length)
          out.set(xs)
          const text = wasm.printScores(xs.length)
          const printable = xs.every((x) => x === 0 || (Math.abs(x) >= 1e-9 && Math.abs(x) < 1e15))
          expect(text !== undefined).toBe(printable)
          if (text === undefined) return
          printed++
          const back = JSON.parse(`[${text}]`) as number[]
          expect(back.map((v, i) => Object.is(v, xs[i] === 0 ? 0 : xs[i]))).toEqual(xs.map(() => true))
        },
      ),
      {numRuns: 1000, seed: 42},
    )
    expect(printed).toBeGreaterThan(200)
  })
})

describe('WasmEnsemble.answerJson', () => {
  // ties, signed zeros, NaN and infinities (printed null), and scores outside what the module prints
  const finite = fc.oneof(
    fc.double({min: 1e-9, max: 1e3, noNaN: true}).chain((v) => fc.constantFrom(v, -v)),
    fc.integer({min: -1e6, max: 1e6}).map((k) => k / 1024),
  )
  const score = fc.oneof(
    {
      arbitrary: fc.constantFrom(
        0,
        -0,
        1,
        1,
        -1,
        0.5,
        0.5,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
      ),
      weight: 1,
    },
    {arbitrary: finite, weight: 3},
  )
  // now and then one score the module does not print
  const scores = fc
    .tuple(
      fc.array(score, {minLength: 1, maxLength: ANSWER_SORT_MAX + 6, size: 'max'}),
      fc.oneof(
        {arbitrary: fc.constant(null), weight: 5},
        {arbitrary: fc.tuple(fc.constantFrom(1e-12, -1e20, 5e-324), fc.nat()), weight: 1},
      ),
    )
    .map(([xs, odd]) => {
      if (odd) xs[odd[1] % xs.length] = odd[0]
      return xs
    })
  const printable = (x: number): boolean =>
    x === 0 || !Number.isFinite(x) || (Math.abs(x) >= 1e-9 && Math.abs(x) < 1e15)

  it('writes the answer rerankAnswerJson writes from bestFirst, to the byte, or leaves it to JS', () => {
    const wasm = new WasmEnsemble(new PackedEnsemble({featureNames: ['a'], trees: []}))
    let written = 0
    fc.assert(
      fc.property(fc.string({unit: 'binary'}), scores, (version, xs) => {
        wasm.input(xs.length)
        const out = wasm.scoreInput(xs.length)
        out.set(xs)
        const scores = Float64Array.from(xs)
        const order = Array.from(bestFirst(scores, new Int32Array(xs.length)))
        const text = wasm.answerJson(xs.length, version)
        expect(text !== undefined).toBe(xs.length <= ANSWER_SORT_MAX && xs.every(printable))
        if (text === undefined) return
        written++
        const answer = JSON.parse(text) as {model: string; scores: (number | null)[]; order: number[]}
        expect(answer.model).toBe(version)
        expect(answer.order).toEqual(order)
        expect(
          answer.scores.map((v, i) => (Number.isFinite(xs[i]) ? Object.is(v, xs[i] === 0 ? 0 : xs[i]) : v === null)),
        ).toEqual(xs.map(() => true))
        const printed = wasm.printScores(xs.length)
        if (printed !== undefined)
          expect(text).toBe(rerankAnswerJson(version, scores, bestFirst(scores, new Int32Array(xs.length)), printed))
      }),
      {numRuns: 600, seed: 42},
    )
    expect(written).toBeGreaterThan(200)
  })

  it('keeps its answer when the memory is laid out again (a larger body, more candidates, another version)', () => {
    const rng = new Rng(9)
    const lm = {featureNames: ['a', 'b', 'c'], trees: Array.from({length: 9}, () => randomCompleteTree(3, 3, rng))}
    const packed = new PackedEnsemble(lm)
    const wasm = new WasmEnsemble(packed)
    const check = (rows: number[][], version: string): void => {
      const flat = Float64Array.from(rows.flat())
      const body = Buffer.from(JSON.stringify({features: rows}))
      expect(wasm.readJsonRows(body, rows.length)).toBe(rows.length)
      const scores = Float64Array.from(wasm.scoreInput(rows.length))
      expectIdentical(scores, packed.scoreAll(flat, rows.length, new Float64Array(rows.length)))
      const text = wasm.answerJson(rows.length, version)
      expect(text).toBe(
        rerankAnswerJson(
          version,
          scores,
          bestFirst(scores, new Int32Array(rows.length)),
          wasm.printScores(rows.length),
        ),
      )
    }
    const rows = (n: number): number[][] => Array.from({length: n}, () => [rng.next(), rng.next(), rng.next()])
    check(rows(5), 'v1')
    check(rows(60), 'v1')
    check(
      Array.from({length: 40}, () => [0.5, 0.25, 0.125]),
      'a longer version, with "quotes" and ünïcode',
    )
    check(rows(3), 'v1')
  })
})

describe('hostile model files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-hostile-'))
  const rng = new Rng(1)
  const good = toSavedModel({featureNames: ['a', 'b'], trees: [randomCompleteTree(2, 2, rng)]}, {}, {}, {})
  const variants: Array<[string, (m: Record<string, any>) => void]> = [
    ['a string threshold', (m) => (m.trees[0].threshold[0] = '0); process.exit(1); (0')],
    ['a string feature index', (m) => (m.trees[0].split_feature[0] = '__proto__')],
    ['a huge feature index', (m) => (m.trees[0].split_feature[0] = 2 ** 40)],
    ['a fractional feature index', (m) => (m.trees[0].split_feature[0] = 0.5)],
    ['a negative feature index', (m) => (m.trees[0].split_feature[0] = -1)],
    ['an infinite leaf value', (m) => (m.trees[0].leaf_value[0] = '__INF__')],
    ['a child pointing back to the root', (m) => (m.trees[0].left[1] = 0)],
    ['a __proto__ tree', (m) => (m.trees[0] = JSON.parse('{"__proto__": {"split_feature": [0]}}'))],
    ['an object leaf value', (m) => (m.trees[0].leaf_value[1] = {valueOf: 'x'})],
  ]
  for (const [what, spoil] of variants) {
    it(`refuses ${what} in one line, before anything is laid out`, () => {
      const m = JSON.parse(JSON.stringify(good))
      spoil(m)
      const path = join(dir, 'm.json')
      writeFileSync(path, JSON.stringify(m).replace('"__INF__"', '1e999'))
      let error: unknown
      try {
        new WasmEnsemble(new PackedEnsemble(fromSavedModel(readModel(path))))
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(InputError)
      const message = (error as Error).message
      expect(message).toContain(path)
      expect(message.split('\n')).toHaveLength(1)
    })
  }

  it('refuses NaN (not JSON) in one line', () => {
    const path = join(dir, 'nan.json')
    writeFileSync(path, JSON.stringify(good).replace(/"threshold":\[[^,\]]+/, '"threshold":[NaN'))
    expect(() => readModel(path)).toThrow(InputError)
  })

  it('runs the same kernel bytes for every model: feature names and numbers never become code', () => {
    const before = Buffer.from(wasmKernel().bytes).toString('hex')
    const names = ['"); process.exit(1); //', '__proto__', 'constructor']
    const lm = {featureNames: names, trees: [randomCompleteTree(3, 3, rng)]}
    const packed = new PackedEnsemble(lm)
    const rows = Float64Array.from({length: 30}, () => rng.next())
    expectIdentical(
      new WasmEnsemble(packed).scoreAll(rows, 10, new Float64Array(10)),
      packed.scoreAll(rows, 10, new Float64Array(10)),
    )
    expect(Buffer.from(wasmKernel().bytes).toString('hex')).toBe(before)
    expect(Buffer.from(wasmKernel().bytes).toString('latin1')).not.toContain('process')
  })
})
