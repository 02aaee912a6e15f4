/**
 * Layers point down only (HELPERS.md, README "Layout"): every relative import in src/ and phases/
 * (static, `export ... from`, and dynamic `import('...')`, type-only ones included) goes to the
 * same layer or a lower one. Folders of one layer may import each other.
 */
import {describe, expect, it} from 'vitest'
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

/** Top to bottom. A folder of src/ missing here fails the test: place it first. */
const LAYERS: readonly (readonly string[])[] = [
  ['commands', 'cli', 'bench'], // thin commands, their shared base, the benchmark commands' measurements
  ['phases'],
  ['search', 'study', 'online', 'rank', 'eval', 'deploy', 'report', 'dashboard', 'serve', 'db'],
  ['engines', 'engine'], // adapters of external engines; kt's own engine
  ['data'],
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
      if (layerOf.get(to)! < layerOf.get(from)!) problems.push(`${relative(root, file)} -> ${spec} (${from} is below ${to})`)
    }
  }
  return problems
}

describe('layers point down only', () => {
  const files = [...sources(join(packageRoot, 'src')), ...sources(join(packageRoot, 'phases'))].map((file) => ({file, text: readFileSync(file, 'utf8')}))

  it('places every folder of src/ in the layer order', () => {
    const folders = readdirSync(join(packageRoot, 'src')).filter((f) => statSync(join(packageRoot, 'src', f)).isDirectory())
    expect(folders.filter((f) => !layerOf.has(f))).toEqual([])
  })

  it('finds the imports it checks (static, type-only, export-from and dynamic)', () => {
    const text = "import {a} from '../eval/metrics.js'\nimport type {B} from \"./b.js\"\nexport {c} from '../../c.js'\nconst d = await import('../d/index.js')\nimport './side-effect.js'\nimport {e} from 'node:fs'\n"
    expect(importSpecifiers(text)).toEqual(['../eval/metrics.js', './b.js', '../../c.js', '../d/index.js', './side-effect.js'])
    // an adapter reaching up into eval (how src/engines/retrieval-service.ts once imported its metrics) fails; down and sideways pass
    const at = (file: string, text: string) => upwardImports([{file: join(packageRoot, file), text}], packageRoot)
    expect(at('src/engines/x.ts', "import {queryMetrics} from '../eval/metrics.js'")).toEqual(['src/engines/x.ts -> ../eval/metrics.js (engines is below eval)'])
    expect(at('src/report/x.ts', "import type {Report} from '../../phases/report-types.js'")).toEqual(['src/report/x.ts -> ../../phases/report-types.js (report is below phases)'])
    expect(at('src/data/x.ts', "const m = await import('../engine/y.js')")).toHaveLength(1)
    expect(at('src/eval/x.ts', "import {a} from '../engines/a.js'\nimport {b} from '../search/b.js'\nimport {c} from '../util/c.js'\nimport {d} from './d.js'")).toEqual([])
  })

  it('no file in src/ or phases/ imports from a layer above its own', () => {
    expect(files.length).toBeGreaterThan(100)
    expect(upwardImports(files, packageRoot)).toEqual([])
  })
})
