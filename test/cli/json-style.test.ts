import {describe, expect, it} from 'vitest'
import {cpSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt} from './helpers.js'
import {packageRoot} from '../../src/util/paths.js'
import {nonSnakeKeys} from './json-style.js'

// The outputs that once mixed styles (budgetUsed and stoppedBy beside best_loss; online counters;
// the LTR generator's spec; a saved model's params). The examples test checks every command's
// --json output and every JSON file the examples write.
describe('one JSON style', () => {
  it('kt search, study, online status, rerank generate/train: snake_case keys only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-json-style-'))
    try {
      cpSync(join(packageRoot, 'fixtures'), join(dir, 'fixtures'), {recursive: true})
      const run = (args: string[]) => {
        const r = kt([...args, '--json'], {cwd: dir})
        expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0)
        return JSON.parse(r.stdout) as unknown
      }
      const outputs: Record<string, unknown> = {
        search: run([
          'search',
          '--objective',
          'counting_ones',
          '--budget',
          '3',
          '--storage',
          's.sqlite',
          '--study',
          'co',
        ]),
        show: run(['study', 'show', 'co', '--storage', 's.sqlite']),
        export: run(['study', 'export', 'co', '--storage', 's.sqlite', '--format', 'json']),
        init: run(['online', 'init', '--tenant', 'acme', '--dir', 'on']),
        status: run(['online', 'status', '--tenant', 'acme', '--dir', 'on']),
        generate: run(['rerank', 'generate', '--out', 'ltr', '--queries', '6,3,3', '--docs', '4,6']),
        train: run([
          'rerank',
          'train',
          '--data',
          'ltr/train.txt',
          '--valid',
          'ltr/valid.txt',
          '--trees',
          '3',
          '--save',
          'm.json',
        ]),
      }
      for (const [name, json] of Object.entries(outputs)) expect(nonSnakeKeys(json), name).toEqual([])
      expect(nonSnakeKeys(JSON.parse(readFileSync(join(dir, 'm.json'), 'utf8'))), 'model file').toEqual([])
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  }, 60_000)
})
