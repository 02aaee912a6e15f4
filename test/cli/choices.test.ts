import {describe, expect, it} from 'vitest'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt} from './helpers.js'

/** One line on stderr, exit 2, matching `pattern`. */
function refused(args: string[], pattern: RegExp, cwd?: string): void {
  const r = kt(args, {cwd})
  expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2)
  expect(r.stderr.split('\n')).toHaveLength(2)
  expect(r.stderr.trim()).toMatch(pattern)
}

describe('choices are checked before any work, with "did you mean"', () => {
  it('commands, flags and choices', () => {
    refused(['serch'], /^kt: unknown command "serch" \(did you mean "kt search"\?\)/)
    refused(['study', 'lst'], /^kt: unknown command "study lst" \(did you mean "kt study list"\?\)/)
    refused(['search', '--objectiv', 'branin'], /^kt: unknown flag --objectiv \(did you mean --objective\?\)$/)
    refused(
      ['search', '--objective', 'retreival', '--data', 'fixtures/memory_small.json'],
      /^kt: --objective: expected one of .*retrieval.*, got "retreival" \(did you mean "retrieval"\?\)$/,
    )
    refused(
      ['search', '--objective', 'branin', '--optimizer', 'bohbb'],
      /^kt: --optimizer: expected one of grid, random, bohb, hyperband, got "bohbb" \(did you mean "bohb"\?\)$/,
    )
    refused(
      ['report', 'x', '--format', 'mdd'],
      /^kt: --format: expected one of md, json, html, got "mdd" \(did you mean "md"\?\)$/,
    )
  })

  it('--metric recall@7 is refused before the study starts (it used to fail every trial and exit 0)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-choices-'))
    try {
      refused(
        [
          'search',
          '--objective',
          'retrieval',
          '--data',
          'fixtures/memory_small.json',
          '--metric',
          'recall@7',
          '--trials',
          '2',
          '--storage',
          join(dir, 's.sqlite'),
        ],
        /^kt: --metric: expected one of recall@1, .*mrr, got "recall@7"/,
      )
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('the same kt search again continues its study; different arguments name the difference', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-rerun-'))
    try {
      const args = [
        'search',
        '--objective',
        'branin',
        '--optimizer',
        'random',
        '--trials',
        '5',
        '--storage',
        join(dir, 's.sqlite'),
      ]
      expect(kt(args).status).toBe(0)
      const again = kt([...args, '--json'])
      expect(again.status, again.stderr).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({name: 'branin-random-s42', trials: 5, run: {evaluated: 0}})
      refused(
        [...args.slice(0, -2), '--storage', join(dir, 's.sqlite'), '--seed', '7', '--study', 'branin-random-s42'],
        /study branin-random-s42: expected the arguments it was created with .*got --seed 7 \(stored: 42\)$/,
      )
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
