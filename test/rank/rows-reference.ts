import {expect} from 'vitest'
import {FALLBACK} from '../../src/rank/rows-json.js'
import {PackedEnsemble} from '../../src/rank/packed.js'
import {WasmEnsemble} from '../../src/rank/wasm.js'

/**
 * What the rows-reader tests compare against: JSON.parse's rows, and the WebAssembly readers of a
 * model of a given width (shared by test/rank/rows-json.test.ts and long-reader.test.ts).
 */

/** What the server did before the fast path: JSON.parse, then each row copied (null = NaN); undefined when it would refuse the body. */
export function viaJsonParse(text: string, width: number): number[] | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const features = (parsed as {features?: unknown})?.features
  if (!Array.isArray(features) || features.length === 0) return undefined
  const out: number[] = []
  for (const row of features) {
    if (!Array.isArray(row) || row.length !== width) return undefined
    for (const v of row) {
      if (v !== null && typeof v !== 'number') return undefined
      out.push(v === null ? Number.NaN : v)
    }
  }
  return out
}

const readers = new Map<number, WasmEnsemble>()
/** The WebAssembly rows readers of a model with `width` columns (no trees: only its readers are used). */
export function wasmReader(width: number): WasmEnsemble {
  let r = readers.get(width)
  if (!r)
    readers.set(
      width,
      (r = new WasmEnsemble(
        new PackedEnsemble({featureNames: Array.from({length: width}, (_, i) => `f${i}`), trees: []}),
      )),
    )
  return r
}

/** Which reader answered a body: the compact or long WebAssembly reader, the general one, or none (JS fallback). */
export type Reader = 'compact' | 'long' | 'general' | 'fallback'

/** Reads `text` with the WebAssembly readers: which reader answered; every value checked bit for bit against JSON.parse. */
export function readChecked(text: string, width: number, maxRows = 64): Reader {
  const wasm = wasmReader(width)
  const rows = wasm.readJsonRows(Buffer.from(text, 'utf8'), maxRows)
  const expected = viaJsonParse(text, width)
  if (rows === FALLBACK) return 'fallback'
  expect(expected, `accepted what JSON.parse refuses: ${text.slice(0, 200)}`).toBeDefined()
  expect(rows * width, text.slice(0, 200)).toBe(expected!.length)
  const got = wasm.input(rows)
  for (let i = 0; i < expected!.length; i++) {
    if (!Object.is(got[i], expected![i]))
      expect({i, text: text.slice(0, 300), reader: wasm.lastReader, got: got[i]}).toEqual({
        i,
        text: text.slice(0, 300),
        reader: wasm.lastReader,
        got: expected![i],
      })
  }
  return wasm.lastReader!
}

/**
 * readChecked, and the rows' bytes equal to what the general WebAssembly reader writes for the
 * same body (NaN's bits included, which Object.is does not see); the general reader must take it.
 */
export function readCheckedAgainstGeneral(text: string, width: number, maxRows = 64): Reader {
  const reader = readChecked(text, width, maxRows)
  if (reader === 'fallback') return reader
  const wasm = wasmReader(width)
  const got = wasm.readJsonRows(Buffer.from(text, 'utf8'), maxRows)
  const fast = Buffer.from(new Uint8Array(wasm.input(got).buffer, wasm.input(got).byteOffset, got * width * 8))
  const general = wasm.readJsonRows(Buffer.from(text, 'utf8'), maxRows, 'general')
  expect(general, text.slice(0, 200)).toBe(got)
  const slow = Buffer.from(new Uint8Array(wasm.input(got).buffer, wasm.input(got).byteOffset, got * width * 8))
  expect(fast.equals(slow), text.slice(0, 300)).toBe(true)
  return reader
}
