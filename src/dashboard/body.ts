/**
 * The study endpoint's bytes. Ten thousand trials are about 4 MB of JSON, and serialising them
 * again for every new trial costs more than everything else a refresh does; so each column is cut
 * into blocks of BLOCK_TRIALS trials whose JSON text is kept, and a block is serialised again only
 * when one of its values changed (a new trial touches the last block of each column; the
 * finish-order columns change only from the first trial whose position in that order moved).
 * The result is byte-for-byte what JSON.stringify gives for the same object, in a fixed key order.
 */
import type {StudyView, TrialColumns} from './views.js'

/** Trials per cached block of a column: small enough that a new trial rewrites little, large enough that a 10,000-trial study has ~10 blocks a column. */
export const BLOCK_TRIALS = 1024

interface Block {
  values: unknown[]
  text: Buffer
}

const COMMA = Buffer.from(',')
const OPEN = Buffer.from('[')
const CLOSE = Buffer.from(']')

function sameValues(a: readonly unknown[], b: readonly unknown[], from: number): boolean {
  for (let k = 0; k < a.length; k++) if (a[k] !== b[from + k]) return false
  return true
}

/** Cached JSON text of column blocks, per study. */
export class ColumnBlocks {
  private readonly blocks = new Map<string, Block[]>()
  /** Blocks serialised (not reused) by the last body. */
  rewritten = 0
  /** Blocks in the last body. */
  total = 0

  /** `[v0,v1,...]` of one column, as chunks; blocks wholly before `unchangedBelow` are reused as they are. */
  private column(
    key: string,
    values: readonly unknown[],
    used: Set<string>,
    out: Buffer[],
    unchangedBelow: number,
  ): void {
    used.add(key)
    let cached = this.blocks.get(key)
    if (!cached) this.blocks.set(key, (cached = []))
    const n = Math.ceil(values.length / BLOCK_TRIALS)
    cached.length = Math.min(cached.length, n)
    out.push(OPEN)
    for (let b = 0; b < n; b++) {
      const from = b * BLOCK_TRIALS
      const to = Math.min(values.length, from + BLOCK_TRIALS)
      let block = cached[b]
      const trusted = block !== undefined && block.values.length === to - from && to <= unchangedBelow
      if (!trusted && (!block || block.values.length !== to - from || !sameValues(block.values, values, from))) {
        const slice = values.slice(from, to)
        block = cached[b] = {values: slice, text: Buffer.from(JSON.stringify(slice).slice(1, -1))}
        this.rewritten++
      }
      this.total++
      if (b > 0) out.push(COMMA)
      out.push(block.text)
    }
    out.push(CLOSE)
  }

  /**
   * The JSON of the trial columns as chunks to concatenate. `unchangedBelow`: the caller vouches
   * that no value at a smaller position changed since the last call (StudyCache.takeChangedFrom);
   * blocks from there on are compared value by value, and serialised again where they differ.
   */
  trials(col: TrialColumns, unchangedBelow = 0): Buffer[] {
    this.rewritten = 0
    this.total = 0
    const used = new Set<string>()
    const out: Buffer[] = []
    const group = (name: string, columns: Record<string, readonly unknown[]>, prefix: string): void => {
      out.push(Buffer.from(`${JSON.stringify(name)}:{`))
      Object.entries(columns).forEach(([k, v], i) => {
        out.push(Buffer.from(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`))
        this.column(`${prefix}${k}`, v, used, out, unchangedBelow)
      })
      out.push(Buffer.from('}'))
    }
    out.push(Buffer.from('{'))
    const flat: Array<[string, readonly unknown[]]> = [
      ['id', col.id],
      ['budget', col.budget],
      ['status', col.status],
      ['value', col.value],
      ['order', col.order],
      ['best_so_far', col.best_so_far],
      ['budget_so_far', col.budget_so_far],
    ]
    for (const [k, v] of flat) {
      out.push(Buffer.from(`"${k}":`))
      this.column(k, v, used, out, unchangedBelow)
      out.push(COMMA)
    }
    group('config', col.config, 'config\u0000')
    out.push(COMMA)
    group('metric', col.metric, 'metric\u0000')
    out.push(Buffer.from('}'))
    for (const k of [...this.blocks.keys()]) if (!used.has(k)) this.blocks.delete(k)
    return out
  }
}

/**
 * `{"version":..., "view": {...}, "charts": {...}, "poll_ms": ...}`, the view's trials from the
 * cached column blocks.
 */
export function studyBody(
  parts: {version: string; view: StudyView; charts: unknown; pollMs: number},
  blocks: ColumnBlocks,
  unchangedBelow = 0,
): Buffer {
  return Buffer.concat(studyBodyChunks(parts, blocks, unchangedBelow))
}

/** studyBody as the chunks to write in order (the server writes them as they are: no 4 MB copy per new trial). */
export function studyBodyChunks(
  parts: {version: string; view: StudyView; charts: unknown; pollMs: number},
  blocks: ColumnBlocks,
  unchangedBelow = 0,
): Buffer[] {
  const {trials, ...rest} = parts.view
  const head = JSON.stringify(rest)
  return [
    Buffer.from(
      `{"version":${JSON.stringify(parts.version)},"view":${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"trials":`,
    ),
    ...blocks.trials(trials, unchangedBelow),
    Buffer.from(`},"charts":${JSON.stringify(parts.charts)},"poll_ms":${JSON.stringify(parts.pollMs)}}`),
  ]
}
