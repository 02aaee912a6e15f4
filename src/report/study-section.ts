import type {StudyReportSection} from './types.js'

/** report.md of a `kt search` study: its summary lines. */
export function studySummary(s: StudyReportSection): string[] {
  const what = s.engine ? `engine ${s.engine.name}` : `objective ${s.objective}`
  const front = s.front
    ? `; Pareto front of ${s.front.points.length} trials over ${s.front.objectives.map((o) => o.metric).join(' and ')}${s.front.hypervolume === null ? '' : `, hypervolume ${num(s.front.hypervolume)}`}`
    : ''
  const verdicts = s.validation
    ? `; held-out verdicts: ${s.validation.profiles.map((p) => `${p.name} ${p.verdict}`).join(', ') || 'none'}`
    : '; not validated on held-out data'
  return [
    `- Study ${s.name}: ${s.optimizer} on ${what}${s.data ? ` with \`${s.data}\`` : ''}, seed ${s.seed}; ${s.trials.finished} trials (${s.trials.ok} ok, ${s.trials.failed} failed)${front}${verdicts}.`,
  ]
}

/** report.md of a `kt search` study: its section (best trial, front, profiles, held-out checks). */
export function studySection(s: StudyReportSection): string[] {
  const latency = s.engine?.latency
    ? ` Latency: ${s.engine.latency === 'measured' ? "measured wall time on kt's side (differs between runs)" : "the engine's declared cost model"}.`
    : ''
  const out = [
    `## Study ${s.name}`,
    '',
    `${s.optimizer} on ${s.engine ? `engine ${s.engine.name} (\`${s.engine.file}\`)` : `objective ${s.objective}`}${s.data ? `, data \`${s.data}\`` : ''}, seed ${s.seed}.${latency}`,
    '',
  ]
  if (s.best)
    out.push(
      `Best trial (largest budget reached, ${s.best.budget}): #${s.best.trial}, loss ${s.best.loss === null ? '-' : num(s.best.loss)}.`,
      '',
      '| parameter | value |',
      '|---|---|',
      ...Object.entries(s.best.config).map(([k, v]) => `| ${k} | ${typeof v === 'number' ? num(v) : String(v)} |`),
      '',
    )
  if (s.front) {
    const f = s.front
    out.push(
      `Pareto front: ${f.points.length} trials (${f.dominated} dominated)${f.hypervolume === null ? '' : `; hypervolume ${num(f.hypervolume)}${f.hypervolume_share === null ? '' : ` (${(100 * f.hypervolume_share).toFixed(1)}% of the box between the reference and the best values)`}`}; reference ${f.objectives.map((o) => `${o.metric} ${o.reference ?? '-'} (${o.rule})`).join(', ')}.`,
      '',
      `| trial | ${f.objectives.map((o) => `${o.metric} (${o.direction === 'maximize' ? 'max' : 'min'})`).join(' | ')} |`,
      `|---:|${f.objectives.map(() => '---:').join('|')}|`,
      ...f.points.map((p) => `| ${p.trial === -1 ? 'defaults' : p.trial} | ${p.values.map(num).join(' | ')} |`),
      '',
    )
  }
  if (s.profiles.length)
    out.push(
      '| profile | trial | why |',
      '|---|---:|---|',
      ...s.profiles.map(
        (p) => `| ${p.name} (${p.description}) | ${p.trial ?? '-'} | ${p.rationale.join('; ').replace(/\|/g, '\\|')} |`,
      ),
      '',
    )
  if (s.holdout)
    out.push(
      `Held-out data: ${s.holdout.split}.`,
      '',
      '| trial | tuning quality | held-out quality | gap | where |',
      '|---:|---:|---:|---:|---|',
      ...s.holdout.rows.map(
        (h) =>
          `| ${h.trial === -1 ? 'defaults' : h.trial} | ${num(h.tuning.quality)} | ${h.holdout ? num(h.holdout.quality) : `failed: ${h.error ?? ''}`} | ${h.gap === null ? '-' : num(h.gap)} | ${h.roles.join(', ')} |`,
      ),
      '',
    )
  if (s.validation) {
    const v = s.validation
    out.push(
      `Each profile against the defaults on ${v.queries} held-out questions: ${v.rule}.`,
      '',
      `| profile | ${v.metric} (held-out) | defaults | delta [${Math.round(100 * v.confidence)}% CI] | verdict |`,
      '|---|---:|---:|---:|---|',
      ...v.profiles.map(
        (p) =>
          `| ${p.name} | ${num(p.quality)} | ${num(p.defaults_quality)} | ${num(p.delta.value)} [${p.delta.low === null ? '-' : num(p.delta.low)}, ${p.delta.high === null ? '-' : num(p.delta.high)}] | ${p.verdict} |`,
      ),
      '',
    )
  }
  return out
}

function num(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(4))) : String(x)
}
