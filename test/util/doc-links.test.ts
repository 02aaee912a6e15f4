/**
 * Every relative link in the repository's Markdown (README.md, docs/, the folders' READMEs) points
 * to a file that exists and, with a `#fragment` into a Markdown file, to a heading it has. Figures
 * and their history move between README and docs/measurements.md; a renamed heading would
 * otherwise leave links that silently go nowhere.
 */
import {describe, expect, it} from 'vitest'
import {existsSync, readFileSync, readdirSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

/** Not the project's own documentation: installed packages, build output, run output. */
const SKIP = new Set(['node_modules', 'dist', 'reports', '.git', '.kt', '.ci-out', 'coverage'])

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return []
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return markdownFiles(path)
    return name.endsWith('.md') ? [path] : []
  })
}

/** Fenced code blocks are not rendered as links. */
const withoutFences = (text: string): string => text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '')

/**
 * A heading's anchor as GitHub makes it (the github-slugger rule): lower case, every character
 * that is not a letter, mark, digit, connector, hyphen or space dropped, spaces to hyphens, and
 * `-1`, `-2`... appended to repeats.
 */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const line of withoutFences(markdown).split('\n')) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)
    if (!m) continue
    const text = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

describe('Markdown links', () => {
  it('makes GitHub anchors', () => {
    const a = anchors(
      '# kt\n## Measured (this machine: 2 cores, shared)\n## Online learning (`src/online`, `src/rank`)\n## kt\n```\n# not a heading\n```\n',
    )
    expect([...a]).toEqual(['kt', 'measured-this-machine-2-cores-shared', 'online-learning-srconline-srcrank', 'kt-1'])
  })

  it('every relative link reaches a file, and its #fragment a heading', () => {
    const files = markdownFiles(packageRoot)
    expect(files.map((f) => relative(packageRoot, f))).toContain('README.md')
    const headings = new Map<string, Set<string>>()
    const broken: string[] = []
    let checked = 0
    for (const file of files) {
      for (const m of withoutFences(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
        checked++
        const [path, fragment] = target.split('#')
        const dest = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
        const where = `${relative(packageRoot, file)}: (${target})`
        if (!existsSync(dest)) broken.push(`${where} no such file`)
        else if (fragment !== undefined && dest.endsWith('.md')) {
          if (!headings.has(dest)) headings.set(dest, anchors(readFileSync(dest, 'utf8')))
          if (!headings.get(dest)!.has(fragment)) broken.push(`${where} no such heading`)
        }
      }
    }
    expect(checked).toBeGreaterThan(10)
    expect(broken).toEqual([])
  })
})
