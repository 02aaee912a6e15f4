/**
 * Layers point down only (README "Layout"): every relative import in src/ and phases/
 * (static, `export ... from`, and dynamic `import('...')`, type-only ones included) goes to the
 * same layer or a lower one. Folders of one layer may import each other, but no two folders
 * anywhere may import each other, directly or round a longer loop (a folder-level cycle check).
 */
import {describe, expect, it} from 'vitest'
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

/**
 * Top to bottom. A folder of src/ missing here fails the test: place it first. The middle
 * (search, study, online, rank, eval) is ordered too, so that a concept below never
 * reaches up into one that uses it.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['commands', 'cli', 'bench'], // thin commands, their shared base, the benchmark commands' measurements
  ['phases'],
  ['dashboard'], // the study dashboard's server
  ['study', 'online'], // studies (where optimisers meet objectives, and their storage); per-tenant bandits and their service (online/serve)
  ['report'], // the report's schema and rendering (Markdown, HTML, charts), fed by eval and search results
  ['eval'], // kt's retrieval engine evaluated: harness, objective, its domain profiles and study analysis
  ['rank'], // the reranker (its tuner drives search's optimisers)
  ['search'], // optimisers, fronts, profile choice: they know no engine, no store, no report
  ['deploy'], // the deployable profile: schema, loader, gate (read by eval, study and online)
  ['adapters', 'engine'], // how kt drives an engine (engine files, their kinds, conformance); kt's own engines
  ['data', 'db'], // datasets; a local PostgreSQL server
  ['stats', 'space'],
  ['util'],
]

const layerOf = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)))

/** The layer folder of a path relative to the package root: src/<folder>/... or phases/... */
function folderOf(rel: string): string {
  const parts = rel.split('/')
  return parts[0] === 'src' ? parts[1] : parts[0]
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? sources(p) : /\.ts$/.test(name) ? [p] : []
  })
}

/** Relative import specifiers of a source file: `from '...'`, `import '...'`, `import('...')`. */
function importSpecifiers(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1])
}

/** Every import that goes up the layer order, as "from -> to (folder layer -> folder layer)". */
function upwardImports(files: ReadonlyArray<{file: string; text: string}>, root: string): string[] {
  const problems: string[] = []
  for (const {file, text} of files) {
    const from = folderOf(relative(root, file))
    for (const spec of importSpecifiers(text)) {
      const target = relative(root, resolve(dirname(file), spec))
      const to = folderOf(target)
      if (to === from || !layerOf.has(to) || !layerOf.has(from)) continue
      if (layerOf.get(to)! < layerOf.get(from)!)
        problems.push(`${relative(root, file)} -> ${spec} (${from} is below ${to})`)
    }
  }
  return problems
}

/** Folder -> folder edges of these files, each with the first import that makes it. */
function folderEdges(
  files: ReadonlyArray<{file: string; text: string}>,
  root: string,
): Map<string, Map<string, string>> {
  const edges = new Map<string, Map<string, string>>()
  for (const {file, text} of files) {
    const from = folderOf(relative(root, file))
    for (const spec of importSpecifiers(text)) {
      const to = folderOf(relative(root, resolve(dirname(file), spec)))
      if (to === from) continue
      const out = edges.get(from) ?? edges.set(from, new Map()).get(from)!
      if (!out.has(to)) out.set(to, `${relative(root, file)} -> ${spec}`)
    }
  }
  return edges
}

/**
 * Every folder-level import cycle: each strongly connected group of folders (Tarjan), with every
 * import between folders of the group (one file each), so a failure shows where to cut.
 */
function folderCycles(edges: ReadonlyMap<string, ReadonlyMap<string, string>>): string[] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const groups: string[][] = []
  const visit = (v: string): void => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const group: string[] = []
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w)
      group.push(w)
      if (w === v) break
    }
    if (group.length > 1) groups.push(group.sort())
  }
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v)
  return groups.sort().map((group) => {
    const inside = group.flatMap((from) =>
      [...(edges.get(from) ?? [])]
        .filter(([to]) => group.includes(to))
        .sort()
        .map(([to, why]) => `${from} -> ${to} (${why})`),
    )
    return `cycle among ${group.join(', ')}: ${inside.join('; ')}`
  })
}

describe('layers point down only', () => {
  const files = [...sources(join(packageRoot, 'src')), ...sources(join(packageRoot, 'phases'))].map((file) => ({
    file,
    text: readFileSync(file, 'utf8'),
  }))

  it('places every folder of src/ in the layer order', () => {
    const folders = readdirSync(join(packageRoot, 'src')).filter((f) =>
      statSync(join(packageRoot, 'src', f)).isDirectory(),
    )
    expect(folders.filter((f) => !layerOf.has(f))).toEqual([])
  })

  it('finds the imports it checks (static, type-only, export-from and dynamic)', () => {
    const text =
      "import {a} from '../eval/metrics.js'\nimport type {B} from \"./b.js\"\nexport {c} from '../../c.js'\nconst d = await import('../d/index.js')\nimport './side-effect.js'\nimport {e} from 'node:fs'\n"
    expect(importSpecifiers(text)).toEqual([
      '../eval/metrics.js',
      './b.js',
      '../../c.js',
      '../d/index.js',
      './side-effect.js',
    ])
    // an adapter reaching up into eval (how src/adapters/retrieval-service.ts once imported its metrics) fails; down and sideways pass
    const at = (file: string, text: string) => upwardImports([{file: join(packageRoot, file), text}], packageRoot)
    expect(at('src/adapters/x.ts', "import {queryMetrics} from '../eval/metrics.js'")).toEqual([
      'src/adapters/x.ts -> ../eval/metrics.js (adapters is below eval)',
    ])
    expect(at('src/report/x.ts', "import type {Report} from '../../phases/report-types.js'")).toEqual([
      'src/report/x.ts -> ../../phases/report-types.js (report is below phases)',
    ])
    expect(at('src/data/x.ts', "const m = await import('../engine/y.js')")).toHaveLength(1)
    expect(
      at(
        'src/eval/x.ts',
        "import {a} from '../adapters/a.js'\nimport {b} from '../search/b.js'\nimport {c} from '../util/c.js'\nimport {d} from './d.js'",
      ),
    ).toEqual([])
  })

  it('finds folder-level cycles, sideways ones included, with the imports behind them', () => {
    const graph = (lines: string[]) =>
      folderEdges(
        lines.map((l) => {
          const [file, spec] = l.split(' ')
          return {file: join(packageRoot, file), text: `import {x} from '${spec}'`}
        }),
        packageRoot,
      )
    expect(
      folderCycles(graph(['src/search/a.ts ../eval/b.js', 'src/eval/b.ts ../search/c.js', 'src/search/c.ts ./a.js'])),
    ).toEqual([
      'cycle among eval, search: eval -> search (src/eval/b.ts -> ../search/c.js); search -> eval (src/search/a.ts -> ../eval/b.js)',
    ])
    // a longer loop, inside one layer (engines and engine may import each other, but not both ways)
    expect(
      folderCycles(
        graph(['src/adapters/a.ts ../engine/b.js', 'src/engine/b.ts ../data/c.js', 'src/data/c.ts ../adapters/d.js']),
      ),
    ).toHaveLength(1)
    expect(
      folderCycles(
        graph(['src/adapters/a.ts ../engine/b.js', 'src/engine/b.ts ../data/c.js', 'src/eval/c.ts ../adapters/d.js']),
      ),
    ).toEqual([])
  })

  it('no two folders of src/ and phases/ import each other, directly or round a loop', () => {
    expect(folderCycles(folderEdges(files, packageRoot))).toEqual([])
  })

  it('no file in src/ or phases/ imports from a layer above its own', () => {
    expect(files.length).toBeGreaterThan(100)
    expect(upwardImports(files, packageRoot)).toEqual([])
  })
})
