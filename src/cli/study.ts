import {relative} from 'node:path'
import {runStudy, type RunOptions} from '../../phases/runner.js'
import type {KtCommand} from './base.js'

/** Runs the study with a spinner on stderr and prints a short summary (or returns it for --json). */
export async function runAndSummarise(cmd: KtCommand, options: Omit<RunOptions, 'progress'>): Promise<unknown> {
  const spinner = (cmd as unknown as {spinner(t: string): import('./base.js').Progress}).spinner('kt: starting')
  try {
    const outcome = await runStudy({...options, progress: (t) => void spinner.update(t)})
    await spinner.succeed(`kt: wrote ${relative(process.cwd(), outcome.outDir) || '.'}/report.json`)
    const r = outcome.report
    const summary = {
      run_id: r.run.id,
      out_dir: outcome.outDir,
      report_json: `${outcome.outDir}/report.json`,
      report_md: `${outcome.outDir}/report.md`,
      phases_run: r.run.phases_run,
      reused_phases: outcome.reused,
      optimum: r.phases.search?.optimum.weights ?? null,
      validation_passed: r.phases.validation?.passed ?? null,
      properties_passed: r.phases.properties?.passed ?? null,
      leaks_found: r.phases.synthetic?.leaks_found ?? null,
      ...(r.seeds ? {seeds: {checked: r.seeds.seeds, spread: r.seeds.spread, verdict_held: r.seeds.verdict_held, verdict_holds_on_every_seed: r.seeds.verdict_holds_on_every_seed}} : {}),
      total_ms: r.timing.total_ms,
    }
    if (!(cmd as unknown as {jsonEnabled(): boolean}).jsonEnabled()) {
      const lines = [`run ${r.run.id}: phases ${r.run.phases_run.join(', ')}`]
      if (r.phases.properties) lines.push(`  properties: ${r.phases.properties.passed ? 'all hold' : 'VIOLATED'}`)
      if (r.phases.synthetic) lines.push(`  leakage audit: ${r.phases.synthetic.leaks_found} flagged`)
      if (r.phases.ablation) lines.push(`  ablation: ${r.phases.ablation.headline}`)
      if (r.phases.search) {
        const o = r.phases.search.optimum
        lines.push(`  optimum: ${Object.entries(o.weights).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')} (${r.phases.search.objective} ${o.objective.estimate?.toFixed(3)})`)
      }
      if (r.phases.validation) {
        const v = r.phases.validation
        const failed = v.datasets.flatMap((d) => d.verdicts.filter((c) => !c.passed).map((c) => `${c.id} on ${d.dataset}`))
        lines.push(`  validation: ${v.note ? `NOT VALIDATED (${v.note})` : v.passed ? 'PASS' : `FAIL (${failed.join(', ')})`}`)
      }
      if (r.seeds) {
        const s = r.seeds
        const spread = Object.entries(s.spread).map(([k, v]) => `${k} ${v.min.toFixed(2)}-${v.max.toFixed(2)}`).join(', ')
        lines.push(`  seeds ${s.seeds.join(',')}: optimum ranges ${spread}; verdict holds on ${s.verdict_held} of ${s.seeds.length}`)
      }
      lines.push(`  report: ${relative(process.cwd(), outcome.outDir)}/report.md (phases took ${r.timing.total_ms} ms)`)
      cmd.log(lines.join('\n'))
    }
    return summary
  } catch (error) {
    await spinner.fail()
    throw error
  }
}
