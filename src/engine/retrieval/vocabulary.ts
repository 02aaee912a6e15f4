/** Interns strings to dense integer ids (0, 1, 2, ...), so indices can live in typed arrays. */
export class Vocabulary {
  private readonly ids = new Map<string, number>()
  readonly strings: string[] = []

  /** The id of `key`, adding it if new. */
  intern(key: string): number {
    let id = this.ids.get(key)
    if (id === undefined) {
      id = this.strings.length
      this.ids.set(key, id)
      this.strings.push(key)
    }
    return id
  }

  /** The id of `key`, or -1 if it was never interned. */
  lookup(key: string): number {
    return this.ids.get(key) ?? -1
  }

  get size(): number {
    return this.strings.length
  }
}

/**
 * Compressed sparse rows: row r's entries are `cols[start[r] .. start[r+1])` (with values in a
 * parallel array). Built from (row, col, value) triples by counting sort, so building is linear.
 */
export interface Csr {
  readonly start: Int32Array
  readonly cols: Int32Array
  readonly values: Float32Array
}

/** Builds CSR from triples; within a row, entries keep the order they were given in. */
export function buildCsr(
  rows: number,
  rowOf: ArrayLike<number>,
  colOf: ArrayLike<number>,
  valueOf: ArrayLike<number>,
): Csr {
  const nnz = rowOf.length
  const start = new Int32Array(rows + 1)
  for (let i = 0; i < nnz; i++) start[rowOf[i] + 1]++
  for (let r = 0; r < rows; r++) start[r + 1] += start[r]
  const fill = start.slice(0, rows)
  const cols = new Int32Array(nnz)
  const values = new Float32Array(nnz)
  for (let i = 0; i < nnz; i++) {
    const at = fill[rowOf[i]]++
    cols[at] = colOf[i]
    values[at] = valueOf[i]
  }
  return {start, cols, values}
}

/** A growable list of numbers backed by a typed array (for triples while building an index). */
export class GrowableArray {
  private data: Float64Array
  length = 0

  constructor(capacity = 1024) {
    this.data = new Float64Array(capacity)
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2)
      bigger.set(this.data)
      this.data = bigger
    }
    this.data[this.length++] = value
  }

  view(): Float64Array {
    return this.data.subarray(0, this.length)
  }
}
