import {relative} from 'node:path'
import {runStudy, type RunOptions} from '../../phases/runner.js'
import type {KtCommand} from './base.js'
import {formatDelta} from '../eval/ablation.js'
import type {EngineReport} from '../report/types.js'

/** Runs the study with a spinner on stderr and prints a short summary (or returns it for --json). */
export async function runAndSummarise(cmd: KtCommand, options: Omit<RunOptions, 'progress'>): Promise<unknown> {
  const spinner = (cmd as unknown as {spinner(t: string): import('./base.js').Progress}).spinner('kt: starting')
  try {
    const outcome = await runStudy({...options, progress: (t) => void spinner.update(t)})
    await spinner.succeed(`kt: wrote ${relative(process.cwd(), outcome.outDir) || '.'}/report.json`)
    const r = outcome.report
    const verdict = runVerdict(r)
    for (const note of outcome.notes) process.stderr.write(`kt: ${note}\n`)
    for (const warning of outcome.warnings) process.stderr.write(`kt: warning: ${warning}\n`)
    const summary = {
      run_id: r.run.id,
      reproducible: r.run.reproducible !== false,
      ...(r.run.reproducible === false ? {reproducible_reason: r.run.reproducible_reason ?? null} : {}),
      out_dir: outcome.outDir,
      report_json: `${outcome.outDir}/report.json`,
      report_md: `${outcome.outDir}/report.md`,
      phases_run: r.run.phases_run,
      reused_phases: outcome.reused,
      // under --resume: each phase recomputed and why (changed inputs or code, missing outputs, ...)
      not_reused: outcome.notReused,
      warnings: outcome.warnings,
      optimum: r.phases.search?.optimum.weights ?? null,
      verdict: verdict.verdict,
      verdict_reasons: verdict.reasons,
      validation_passed: r.phases.validation ? r.phases.validation.verdict === 'pass' : null,
      validation_verdict: r.phases.validation?.verdict ?? null,
      properties_passed: r.phases.properties?.passed ?? null,
      leaks_found: r.phases.synthetic?.leaks_found ?? null,
      ...(r.engine ? {engine: engineSummary(r.engine)} : {}),
      ...(r.seeds
        ? {
            seeds: {
              checked: r.seeds.seeds,
              run_verdict: r.seeds.run_verdict,
              spread: r.seeds.spread,
              verdict_held: r.seeds.verdict_held,
              verdict_holds_on_every_seed: r.seeds.verdict_holds_on_every_seed,
            },
          }
        : {}),
      total_ms: r.timing.total_ms,
    }
    if (!(cmd as unknown as {jsonEnabled(): boolean}).jsonEnabled()) {
      const lines = [`run ${r.run.id}: phases ${r.run.phases_run.join(', ')}`]
      if (r.run.reproducible === false) lines.push(`  NOT REPRODUCIBLE: ${r.run.reproducible_reason}`)
      if (r.phases.properties) lines.push(`  properties: ${r.phases.properties.passed ? 'all hold' : 'VIOLATED'}`)
      if (r.phases.synthetic) {
        const audits = r.phases.synthetic.datasets.flatMap((d) => d.leakage.map((a) => ({...a, dataset: d.id})))
        const leaks = audits.filter((a) => a.verdict === 'leak')
        const constant = audits.filter((a) => a.verdict === 'constant')
        const tooFew = [...new Set(audits.filter((a) => a.verdict === 'too-few-rows').map((a) => a.dataset))]
        lines.push(
          `  leakage audit: ${leaks.length} flagged as leakage${leaks.length ? ` (${leaks.map((a) => `${a.signal} on ${a.dataset}: ${a.dependence === null ? '' : `${(100 * a.dependence).toFixed(1)}%`}`).join(', ')})` : ''}${constant.length ? `, ${constant.length} constant (${constant.map((a) => `${a.signal} on ${a.dataset}`).join(', ')})` : ''}${tooFew.length ? `, not evaluable on ${tooFew.join(', ')} (too few rows)` : ''}`,
        )
      }
      if (r.phases.ablation) lines.push(`  ablation: ${r.phases.ablation.headline}`)
      if (r.engine) lines.push(...engineLines(r.engine))
      if (r.phases.search) {
        const o = r.phases.search.optimum
        lines.push(
          `  optimum: ${Object.entries(o.weights)
            .map(([k, v]) => `${k} ${v.toFixed(2)}`)
            .join(', ')} (${r.phases.search.objective} ${o.objective.estimate?.toFixed(3)})`,
        )
      }
      if (r.phases.validation) {
        const v = r.phases.validation
        const failed = v.datasets.flatMap((d) =>
          d.verdicts
            .filter((c) => !c.passed)
            .map((c) => `${c.id} on ${d.dataset}${c.evaluable === false ? ' (not evaluable)' : ''}`),
        )
        const reasons = [...(v.leakage_flagged?.length ? [v.note ?? 'leakage flagged'] : []), ...failed]
        lines.push(
          `  validation: ${v.verdict === 'not-validated' ? `NOT VALIDATED (${v.note})` : v.verdict === 'pass' ? 'PASS' : `FAIL (${reasons.join('; ')})`}`,
        )
      }
      if (r.seeds) {
        const s = r.seeds
        const spread = Object.entries(s.spread)
          .map(([k, v]) => `${k} ${v.min.toFixed(2)}-${v.max.toFixed(2)}`)
          .join(', ')
        lines.push(
          `  seeds ${s.seeds.join(',')}: optimum ranges ${spread}; the run's verdict (${s.run_verdict.toUpperCase()}) holds on ${s.verdict_held} of ${s.seeds.length}`,
        )
      }
      lines.push(`  report: ${relative(process.cwd(), outcome.outDir)}/report.md (phases took ${r.timing.total_ms} ms)`)
      lines.push(
        `  verdict: ${verdict.verdict.toUpperCase()}${verdict.reasons.length ? ` (${verdict.reasons.join('; ')})` : ''}; exit ${verdict.exitCode}`,
      )
      cmd.log(lines.join('\n'))
    }
    // CI reads the exit code: 1 when an acceptance criterion failed or nothing could be validated
    if (verdict.exitCode !== 0) process.exitCode = verdict.exitCode
    return summary
  } catch (error) {
    await spinner.fail()
    throw error
  }
}

export interface RunVerdict {
  /** n/a: a partial run (kt phase N) in which the validation did not run; it is never called a pass. */
  readonly verdict: 'pass' | 'fail' | 'not-validated' | 'n/a'
  readonly reasons: string[]
  /**
   * 0 pass, or n/a with nothing failed in the phases that ran; 1 an acceptance criterion failed
   * (properties violated, a leak flagged, validation failed) or the validation had nothing to validate on.
   */
  readonly exitCode: 0 | 1
}

/** Why a run without the validation phase has no verdict (the reason printed with n/a). */
const NOT_VALIDATED_PARTIAL = 'partial run: the validation (phase 5) did not run, so nothing was validated'

/**
 * The verdict of a run over the phases it ran: any failed check fails it; a validation with nothing
 * to validate on is not a pass (not-validated, exit 1); a partial run without the validation is
 * n/a (exit 0 when nothing that ran failed: properties, leakage audit).
 */
export function runVerdict(r: import('../report/types.js').Report): RunVerdict {
  // a format-2 plan: the verdict is its engine's (the tuned profile under the plan's acceptance rule)
  const conformance = r.phases.properties?.conformance
  const nonConforming =
    conformance && !conformance.passed
      ? [
          `engine ${conformance.engine} fails conformance checks: ${conformance.checks
            .filter((c) => c.violations > 0)
            .map((c) => c.id)
            .join(', ')}`,
        ]
      : []
  const heldOut = r.engine?.not_applicable?.validation
  if (heldOut && !r.engine?.validation)
    return nonConforming.length
      ? {verdict: 'fail', reasons: nonConforming, exitCode: 1}
      : {verdict: 'not-validated', reasons: [`no held-out validation: ${heldOut}`], exitCode: 1}
  if (r.engine?.validation) {
    const v = r.engine.validation
    const reasons = [
      ...nonConforming,
      ...(v.verdict === 'pass'
        ? []
        : [
            `${r.engine.engine.name}: the tuned profile ${formatDelta(v.tuned.delta)} ${v.metric} against ${v.tuned.against} fails: ${v.rule}`,
          ]),
    ]
    return reasons.length ? {verdict: 'fail', reasons, exitCode: 1} : {verdict: 'pass', reasons: [], exitCode: 0}
  }
  const reasons: string[] = []
  const props = r.phases.properties
  if (props && props.properties.some((p) => p.violations > 0))
    reasons.push('a property of the scoring math is violated')
  reasons.push(...nonConforming)
  const leaks = (r.phases.synthetic?.datasets ?? []).flatMap((d) =>
    d.leakage.filter((a) => a.verdict === 'leak').map((a) => `${a.signal} on ${d.id}`),
  )
  if (leaks.length) reasons.push(`the leakage audit flagged ${leaks.join(', ')}`)
  const v = r.phases.validation
  if (v && v.verdict === 'fail') {
    const failed = v.datasets.flatMap((d) =>
      d.verdicts
        .filter((c) => !c.passed)
        .map((c) => `${c.id} on ${d.dataset}${c.evaluable === false ? ' (not evaluable)' : ''}`),
    )
    if (failed.length) reasons.push(`validation failed: ${failed.join(', ')}`)
  }
  if (reasons.length) return {verdict: 'fail', reasons, exitCode: 1}
  if (v && v.verdict === 'not-validated')
    return {verdict: 'not-validated', reasons: [v.note ?? 'nothing was validated'], exitCode: 1}
  // nothing that ran failed, but without a validation there is nothing to call a pass
  if (!v) return {verdict: 'n/a', reasons: [NOT_VALIDATED_PARTIAL], exitCode: 0}
  return {verdict: 'pass', reasons: [], exitCode: 0}
}

/** The engine's figures for --json: the tuned and minimal profiles against the reference, and the ablation's headline (those its run has). */
function engineSummary(e: EngineReport): Record<string, unknown> {
  const v = e.validation
  const d = (c: NonNullable<typeof v>['tuned']) => ({
    value: c.delta.value,
    low: c.delta.low,
    high: c.delta.high,
    passed: c.passed,
  })
  return {
    name: e.engine.name,
    ref: e.engine.ref,
    metric: e.metric,
    ...(v
      ? {against: v.tuned.against, tuned: d(v.tuned), minimal: {...d(v.minimal), changes: e.ablation?.minimal.changes}}
      : {}),
    ...(e.ablation ? {changed: e.ablation.changes.map((c) => c.parameter), ablation: e.ablation.headline} : {}),
    ...(e.deploy ? {profiles: e.deploy.profiles.map((p) => p.files[2])} : {}),
  }
}

function engineLines(e: EngineReport): string[] {
  const v = e.validation
  return [
    `  engine: ${e.engine.name} (${e.engine.ref}), ${e.metric} on ${e.data}`,
    ...(e.ablation ? [`  ablation: ${e.ablation.headline}`] : []),
    ...(v
      ? [
          `  validation: tuned ${formatDelta(v.tuned.delta)}, minimal ${formatDelta(v.minimal.delta)} against ${v.tuned.against} (${v.tuned.queries} held-out questions): ${v.verdict.toUpperCase()}`,
        ]
      : []),
    ...(e.deploy ? [`  profiles: ${e.deploy.profiles.map((p) => `${p.files[2]} (${p.verdict})`).join(', ')}`] : []),
  ]
}
