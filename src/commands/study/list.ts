import {KtCommand} from '../../cli/base.js'
import {storageFlag} from '../../cli/flags.js'

export default class StudyList extends KtCommand {
  static override summary = 'List the studies in a study file.'
  static override examples = [
    {
      description:
        'After `kt search --objective branin --optimizer bohb --trials 100` (it stores study branin-bohb-s42 in kt-studies.sqlite, the default --storage): the studies there.',
      command: '<%= config.bin %> study list',
    },
    {
      description:
        'After `kt search --objective counting_ones --budget 50 --storage studies.sqlite --study co-1`: the studies of that file, for scripts.',
      command: '<%= config.bin %> study list --storage studies.sqlite --json',
    },
  ]
  static override flags = {
    storage: storageFlag(),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(StudyList)
    const {openStorage} = await import('../../study/storage.js')
    const {incumbent} = await import('../../search/incumbent.js')
    const {studyGridCoverage} = await import('../../study/format.js')
    const {snakeKeys} = await import('../../util/json-keys.js')
    const {escapeControls} = await import('../../util/errors.js')
    const store = await openStorage(flags.storage, {readonly: true})
    try {
      const listed = await store.listStudies()
      const trialsOf = new Map(
        await Promise.all(listed.map(async (s) => [s.name, await store.trials(s.name)] as const)),
      )
      const studies = listed.map((s) => {
        // a grid study stopped before its whole grid is finished, but not the grid it names
        const grid = studyGridCoverage(s, trialsOf.get(s.name)!)
        return {
          name: s.name,
          objective: (s.objective as {name?: string}).name ?? '?',
          optimizer: s.optimizer,
          seed: s.seed,
          state: s.state,
          trials: s.trials,
          ok: s.ok,
          failed: s.failed,
          running: s.running,
          incumbent_loss: incumbent(trialsOf.get(s.name)!)?.loss ?? null,
          updated_at: s.updatedAt,
          ...(grid ? {grid: snakeKeys(grid) as Record<string, unknown>} : {}),
        }
      })
      if (!this.jsonEnabled()) {
        if (studies.length === 0) this.log(`no studies in ${store.label}`)
        const header = 'name,objective,optimizer,seed,state,trials,ok,failed,running,incumbent loss'.split(',')
        // a name stored before names were checked (src/study/name.ts) may hold a line break: shown escaped, one row a study
        const rows = studies.map((s) => [
          escapeControls(s.name),
          s.objective,
          s.optimizer,
          String(s.seed),
          s.grid && !s.grid.complete ? `${s.state} (partial grid)` : s.state,
          String(s.trials),
          String(s.ok),
          String(s.failed),
          String(s.running),
          s.incumbent_loss === null ? '-' : s.incumbent_loss.toPrecision(6),
        ])
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
        if (studies.length > 0)
          for (const r of [header, ...rows])
            this.log(
              r
                .map((c, i) => c.padEnd(widths[i]))
                .join('  ')
                .trimEnd(),
            )
      }
      return {storage: store.label, studies}
    } finally {
      await store.close()
    }
  }
}
