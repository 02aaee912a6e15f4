import {confidenceLabel, sharedConfidenceLabel} from './confidence.js'
import {studySection, studySummary} from './study-section.js'
import {LEAKAGE_DEPENDENCE_THRESHOLD} from '../data/importance/leakage.js'
import {engineSections} from './engine-markdown.js'
import type {Report, Interval, DeltaInterval, WeightsRecord, PhaseResults, SeedRobustness} from './types.js'

/**
 * report.md: a pull-request-ready rendering of report.json. Every number is read from the
 * report object, so `kt report DIR --format md` reproduces it from the JSON alone.
 */
export function renderMarkdown(r: Report): string {
  const out: string[] = []
  const p = r.phases
  out.push(`# kt study: ${r.run.plan.name}`, '')
  out.push(
    r.study
      ? `Study \`${r.run.id}\` (kt search) · seed ${r.run.seed} · kt ${r.run.kt_version}`
      : `Run \`${r.run.id}\` · seed ${r.run.seed} · plan \`${r.run.plan.file}\` (sha256 ${r.run.plan.sha256_12}) · kt ${r.run.kt_version} · phases run: ${r.run.phases_run.join(', ')}`,
    '',
  )
  // reports written before the field are read as reproducible (they had no external engine with measured latency)
  const reproducible = r.run.reproducible !== false
  if (!reproducible)
    out.push(
      `**Not reproducible:** ${r.run.reproducible_reason ?? 'a number above the timing section was measured on the clock'}.`,
      '',
    )
  // a format-2 plan's engine has its own summary and phases 3-6 (src/report/engine-markdown.ts); a kt search
  // study's report has no phases: its summary and section stand in for them
  if (r.engine) out.push(...engineSections(r.engine, retrieval))
  else {
    const lines = r.study && Object.keys(p).length === 0 ? studySummary(r.study) : summary(p)
    out.push('## Summary', '', ...(r.run.warnings ?? []).map((w) => `- **Warning**: ${w}.`), ...lines, '')
  }
  if (r.study) out.push(...studySection(r.study))
  if (p.properties) out.push(...properties(p.properties))
  if (p.synthetic) out.push(...synthetic(p.synthetic))
  if (p.ablation) out.push(...ablation(p.ablation))
  if (p.search) out.push(...search(p.search))
  if (p.validation) out.push(...validation(p.validation))
  if (p.deploy) out.push(...deploy(p.deploy))
  if (p.visualize) out.push(...charts(p.visualize))
  if (r.seeds) out.push(...seedCheck(r.seeds))
  out.push(
    reproducible
      ? '## Timing (differs between runs; everything above is reproducible)'
      : '## Timing (differs between runs; this run is NOT reproducible: see the note at the top)',
    '',
    '| phase | ms |',
    '|---|---:|',
  )
  for (const [name, ms] of Object.entries(r.timing.phases_ms)) out.push(`| ${name} | ${ms} |`)
  out.push(`| total | ${r.timing.total_ms} |`, '')
  const lc = r.timing.retrieval_latency_check
  if (lc) {
    out.push(
      `Retrieval latency: ${lc.note}; load average ${lc.load.before.toFixed(2)} -> ${lc.load.after.toFixed(2)}.`,
      '',
      '| trial | P99 model (ms) | P99 measured (ms) | model error | P50 model (ms) | P50 measured (ms) | model error | timings |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|',
    )
    const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`
    for (const q of lc.points)
      out.push(
        `| ${q.trial} | ${q.model_p99_ms.toFixed(3)} | ${q.measured_p99_ms.toFixed(3)} | ${pct(q.error_p99)} | ${q.model_p50_ms.toFixed(3)} | ${q.measured_p50_ms.toFixed(3)} | ${pct(q.error_p50)} | ${q.timings} |`,
      )
    out.push(
      '',
      `Median |model error| over the front: P50 ${(100 * lc.median_abs_error_p50).toFixed(0)}%, P99 ${(100 * lc.median_abs_error_p99).toFixed(0)}%.`,
      '',
    )
  }
  return `${out.join('\n')}\n`
}

function summary(p: Partial<PhaseResults>): string[] {
  const lines: string[] = []
  if (p.properties) {
    const ok = p.properties.properties.filter((x) => x.violations === 0).length
    lines.push(
      `- Properties: ${ok} of ${p.properties.properties.length} hold (${p.properties.properties.reduce((n, x) => n + x.cases, 0)} cases).`,
    )
  }
  if (p.synthetic) lines.push(`- Leakage audit: ${leakageSummary(p.synthetic)}.`)
  if (p.ablation) lines.push(`- Ablation: ${p.ablation.headline}`)
  if (p.search) {
    const s = p.search
    lines.push(
      `- Search on ${s.dataset} (${s.grid.points}-point grid, ${s.refine.points}-point refinement, ${s.random.samples} random, ${s.bohb.evaluations} BOHB evaluations): optimum ${weights(s.optimum.weights)} with ${s.objective} ${ci(s.optimum.objective)}, against the baseline ${weights(s.baseline.weights)} at ${ci(s.baseline.objective)}.`,
    )
  }
  if (p.validation) {
    for (const d of p.validation.datasets) {
      const verdicts = d.verdicts.map((v) => `${v.id} ${verdictWord(v)}`).join(', ')
      lines.push(
        `- Validation on ${d.dataset}: Spearman change ${delta(d.delta.spearman)}; token budget ${tokenChange(d.token_budget_change)}; ${verdicts}.`,
      )
    }
    const failed = p.validation.datasets.flatMap((d) =>
      d.verdicts
        .filter((v) => !v.passed)
        .map((v) => `${v.id} on ${d.dataset}${v.evaluable === false ? ' (not evaluable)' : ''}`),
    )
    // reports before the verdict field: a note meant "not validated"
    const verdict =
      p.validation.verdict ?? (p.validation.note ? 'not-validated' : p.validation.passed ? 'pass' : 'fail')
    const reasons = [
      ...(p.validation.leakage_flagged?.length ? [p.validation.note ?? 'the leakage audit flagged a signal'] : []),
      ...failed,
    ]
    lines.push(
      `- Verdict: ${verdict === 'not-validated' ? `**not validated**: ${p.validation.note}` : verdict === 'pass' ? '**all acceptance criteria pass**' : `**failed**: ${reasons.join('; ')}`}.`,
    )
  } else {
    // a partial run (kt phase N) that never reached the validation has no verdict to give
    lines.push(
      '- Verdict: **n/a**: the validation (phase 5) did not run in this partial run, so nothing here is validated.',
    )
  }
  return lines
}

function leakageSummary(r: PhaseResults['synthetic']): string {
  const audits = r.datasets.flatMap((d) => d.leakage.map((a) => ({...a, dataset: d.id, turns: d.turns})))
  const of = (verdict: string) => audits.filter((a) => a.verdict === verdict)
  const leaks = of('leak'),
    constant = of('constant'),
    tooFew = of('too-few-rows')
  if (leaks.length + constant.length + tooFew.length === 0)
    return 'no signal is a function of the label and none is constant'
  const parts: string[] = []
  if (leaks.length)
    parts.push(
      `${leaks.length} signal(s) flagged as a function of the label (${leaks.map((a) => `${a.signal} on ${a.dataset}`).join(', ')})`,
    )
  if (constant.length)
    parts.push(`${constant.length} constant (${constant.map((a) => `${a.signal} on ${a.dataset}`).join(', ')})`)
  if (tooFew.length) {
    const sets = [...new Map(tooFew.map((a) => [a.dataset, a.turns])).entries()]
    parts.push(
      `not evaluable on ${sets.map(([id, n]) => `${id} (${n} rows)`).join(', ')}: too few rows to flag even an exact copy of the label`,
    )
  }
  return `${parts.join('; ')}; see Phase 2`
}

function propertyRows(list: PhaseResults['properties']['properties']): string[] {
  return [
    '| property | cases | violations | shrunk counterexample |',
    '|---|---:|---:|---|',
    ...list.map(
      (x) =>
        `| ${x.description} | ${x.cases} | ${x.violations} | ${x.counterexample === null ? '-' : `\`${x.counterexample.replace(/\|/g, '\\|')}\``} |`,
    ),
  ]
}

function properties(r: PhaseResults['properties']): string[] {
  const c = r.conformance
  return [
    '## Phase 1: property tests',
    '',
    // a kt_plan 2 run checks its engine only: kt's scoring properties belong to the importance study
    ...(r.properties.length ? [...propertyRows(r.properties), ''] : []),
    ...(c
      ? [
          `### Conformance of engine ${c.engine} (\`${c.file}\`, ${c.kind})`,
          '',
          `${c.data ? `Driven through its protocol on the first conversations of \`${c.data}\`` : 'One evaluation per case'}, cases drawn by fast-check from the run's seed${c.deterministic ? '' : '; the engine file declares it non-deterministic, so the determinism checks are skipped'}: ${c.passed ? 'every check holds' : `**${c.checks.filter((x) => x.violations > 0).length} of ${c.checks.length} checks violated**`}.`,
          '',
          ...propertyRows(c.checks),
          '',
        ]
      : []),
  ]
}

function synthetic(r: PhaseResults['synthetic']): string[] {
  const out = [
    '## Phase 2: datasets and leakage audit',
    '',
    '| dataset | role | turns | reference time | regenerates identically | mean truth | sha256 |',
    '|---|---|---:|---|---|---:|---|',
  ]
  for (const d of r.datasets)
    out.push(
      `| ${d.id} | ${d.role} | ${d.turns} | ${d.reference_time} | ${d.regenerates_identically === null ? 'n/a (imported)' : d.regenerates_identically ? 'yes' : '**no**'} | ${f(d.truth.mean)} | \`${d.sha256.slice(0, 12)}\` |`,
    )
  out.push(
    '',
    `Variance explained by the label: the share of a signal's variance that some function of the label explains (von Neumann successive differences after sorting by the label, on the values and on their ranks, and a leave-one-out correlation ratio over tied labels; the largest); about 0 when unrelated, so small negative values are estimation noise. At ${pct(LEAKAGE_DEPENDENCE_THRESHOLD, 0)} or more a signal is flagged as computed from the label.`,
    '',
    '| dataset | signal | verdict | variance explained by the label | Spearman with truth |',
    '|---|---|---|---:|---:|',
  )
  for (const d of r.datasets)
    for (const a of d.leakage)
      out.push(
        `| ${d.id} | ${a.signal} | ${a.verdict === 'ok' ? 'ok' : `**${a.verdict}**`} | ${a.dependence === null ? 'undefined' : pct(a.dependence)} | ${a.spearman === null ? 'undefined' : f(a.spearman)} |`,
      )
  return [...out, '', ...(r.engine ? engineSynthetic(r.engine) : [])]
}

function engineSynthetic(e: NonNullable<PhaseResults['synthetic']['engine']>): string[] {
  const g = e.generator
  const out = [
    `### Engine ${e.engine} on synthetic conversations with planted evidence`,
    '',
    `kt's memory synthesiser (seed ${g.seed}, ${g.conversations} conversations of ${g.sessions} sessions, ${e.turns} turns; sha256 \`${e.sha256.slice(0, 12)}\`, ${e.regenerates_identically ? 'regenerates identically' : '**does not regenerate identically**'}). The plan's conversations: \`${e.data.file}\` (${e.data.conversations} conversations, ${e.data.questions} questions, sha256 \`${e.data.sha256.slice(0, 12)}\`).`,
    '',
  ]
  const s = e.scored
  if (!s) out.push(`Not scored: ${e.note ?? 'kt cannot drive this engine'}.`, '')
  else
    out.push(
      `At its defaults the engine finds a planted evidence turn in its top ${s.k} for ${s.found} of ${s.questions} questions (recall@${s.k} ${f(s.metrics[`recall@${s.k}`])}, MRR ${f(s.metrics.mrr)}).`,
      '',
      `| category | questions | found in top ${s.k} | recall@${s.k} |`,
      '|---|---:|---:|---:|',
      ...s.by_category.map((c) => `| ${c.category} | ${c.questions} | ${c.found} | ${f(Number(c[`recall@${s.k}`]))} |`),
      '',
    )
  const l = e.leakage
  if (l)
    out.push(
      `Leakage audit of the split (${l.tuning_conversations} tuning, ${l.holdout_conversations} held-out conversations): ${l.turns_also_in_tuning} of ${l.holdout_turns} held-out turns have a text that is also in the tuning conversations; ${l.questions_with_evidence_in_tuning} of ${l.holdout_questions} held-out questions have such an evidence turn${l.verdict === 'leak' ? ' (**a tuned engine may have seen their answers**)' : ''}.`,
      '',
    )
  return out
}

function ablation(r: PhaseResults['ablation']): string[] {
  const out = ['## Phase 3: ablation', '', r.headline, '']
  for (const d of r.datasets) {
    const pearsonLevel = sharedConfidenceLabel(d.configs.map((c) => c.pearson))
    const spearmanLevel = sharedConfidenceLabel(d.configs.map((c) => c.spearman))
    const changes = d.configs.flatMap((c) => (c.spearman_change ? [c.spearman_change] : []))
    if (changes.length === 0) {
      // reports written before the paired change
      out.push(
        `### ${d.dataset}`,
        '',
        `| configuration | weights | Pearson (${pearsonLevel} CI) | Spearman (${spearmanLevel} CI) |`,
        '|---|---|---|---|',
      )
      for (const c of d.configs) out.push(`| ${c.id} | ${weights(c.weights)} | ${ci(c.pearson)} | ${ci(c.spearman)} |`)
    } else {
      out.push(
        `### ${d.dataset}`,
        '',
        `| configuration | weights | Pearson (${pearsonLevel} CI) | Spearman (${spearmanLevel} CI) | Spearman change vs baseline (absolute, paired, ${sharedConfidenceLabel(changes)} CI) |`,
        '|---|---|---|---|---|',
      )
      for (const c of d.configs)
        out.push(
          `| ${c.id} | ${weights(c.weights)} | ${ci(c.pearson)} | ${ci(c.spearman)} | ${c.spearman_change ? deltaBrief(c.spearman_change) : '-'} |`,
        )
    }
    out.push('')
  }
  return out
}

function search(s: PhaseResults['search']): string[] {
  const out = [
    '## Phase 4: search',
    '',
    `Objective: ${s.objective} against the truth on ${s.dataset}. Grid: all ${s.grid.points} points of the simplex lattice with step ${s.grid.step}; refinement: ${s.refine.points} points with step ${s.refine.step} within ${s.refine.radius} of the grid optimum; random: ${s.random.samples} uniform points on the simplex.`,
    '',
    '| search | best weights | objective | token budget (tokens) |',
    '|---|---|---:|---:|',
    `| grid | ${weights(s.grid.best.weights)} | ${fn(s.grid.best.objective)} | ${f(s.grid.best.token_budget, 1)} |`,
    `| refine | ${weights(s.refine.best.weights)} | ${fn(s.refine.best.objective)} | ${f(s.refine.best.token_budget, 1)} |`,
    `| random | ${weights(s.random.best.weights)} | ${fn(s.random.best.objective)} | ${f(s.random.best.token_budget, 1)} |`,
    `| BOHB | ${weights(s.bohb.best.weights)} | ${fn(s.bohb.best.objective)} | ${f(s.bohb.best.token_budget, 1)} |`,
    '',
    `BOHB: ${s.bohb.evaluations} evaluations using ${f(s.bohb.budget_used, 1)} units of budget (one unit = the ${s.bohb.budget_unit}); every trial is in \`${s.bohb.study.file}\` (study ${s.bohb.study.name}; \`kt study show ${s.bohb.study.name} --storage ${s.bohb.study.file}\`).`,
    '',
    `Constraint: ${s.constraint.description}; ${s.constraint.feasible_points} of ${s.constraint.evaluated_points} evaluated points meet it. ` +
      (s.constraint.binds
        ? `It binds: the unconstrained best (${s.constraint.unconstrained_best.source}, ${weights(s.constraint.unconstrained_best.weights)}) reaches ${fn(s.constraint.unconstrained_best.objective)} with ${f(s.constraint.unconstrained_best.token_budget, 1)} tokens.`
        : 'It does not bind: the best point meets it.'),
    '',
    `Optimum (from ${s.optimum.source}): ${weights(s.optimum.weights)}, ${s.objective} ${ci(s.optimum.objective)} with ${f(s.optimum.token_budget, 1)} tokens; baseline ${ci(s.baseline.objective)} with ${f(s.baseline.token_budget, 1)} tokens. ` +
      `The interval is optimistic: the optimum was picked as the best of ${s.constraint.evaluated_points} points on this same data (Phase 5 measures it on data it was not tuned on).`,
    '',
    `Gradient at the optimum (${s.smoothness.note}, step ${s.smoothness.step}): ${Object.entries(s.smoothness.gradient)
      .map(
        ([k, v]) =>
          `${k} ${v === null ? `undefined (${s.smoothness.undefined_because?.[k] ?? 'undefined objective'})` : f(v)}`,
      )
      .join(
        ', ',
      )} (norm ${fn(s.smoothness.gradient_norm)}); a small norm means a flat neighbourhood, so nearby weights score about the same.`,
    '',
    `Top ${s.top.length}:`,
    '',
    '| rank | weights | objective | token budget |',
    '|---:|---|---:|---:|',
    ...s.top.map((t, i) => `| ${i + 1} | ${weights(t.weights)} | ${fn(t.objective)} | ${f(t.token_budget, 1)} |`),
    '',
    `Front of ${s.objective} vs token budget: ${s.front.length} non-dominated grid points, from ${f(s.front[0]?.token_budget ?? 0, 1)} tokens (${fn(s.front[0]?.objective ?? null)}) to ${f(s.front.at(-1)?.token_budget ?? 0, 1)} tokens (${fn(s.front.at(-1)?.objective ?? null)}).`,
    '',
  ]
  if (s.retrieval) out.push(...retrieval(s.retrieval))
  return out
}

function retrieval(r: NonNullable<PhaseResults['search']['retrieval']>): string[] {
  const latency = r.engine
    ? r.engine.latency === 'measured'
      ? "measured wall time per search on kt's side (warm, repeated): it differs between runs and with the machine's load, and so may the front and the profiles"
      : "the engine's declared deterministic cost model (wall time in the trials' measured_ metrics)"
    : "estimated from the work each query does by the engine's cost model, so it repeats exactly; measured beside it in the timing section"
  return [
    r.engine ? `### Retrieval engine: ${r.engine.name} (external, \`${r.engine.file}\`)` : '### Retrieval engine',
    '',
    `${r.optimizer.toUpperCase()} on \`${r.data}\` (fidelity tiers as budgets, ${r.budget} units of the full query set per study; studies ${r.studies.join(', ')}, every trial in \`${r.store}\`). Objectives: ${r.metric} (maximised) and P99 latency (minimised; ${latency}). The engine's default configuration scores ${f(r.default_quality)} and competes as trial "defaults", so nothing it beats on these queries is chosen. ${r.holdout ? `Tuned on part of the data; the front and the profiles are scored on held-out conversations below.` : `These are tuning-set numbers on ${r.data}: check a profile on your own data with \`kt eval --profile\`.`}`,
    '',
    `Pareto front: ${r.front.points.length} trials (${r.front.dominated.length} dominated); hypervolume ${f(r.front.hypervolume)} (${(100 * r.front.hypervolume_share).toFixed(1)}% of the box between the reference and the best values; reference ${r.metric} ${r.front.reference.quality} at ${r.front.reference.p99_ms} ms: ${r.front.reference.rule}).`,
    ...(r.trials ? ['', fidelityNote(r.trials)] : []),
    '',
    '| trial | ' + r.metric + ` | P99 ms (${r.engine?.latency === 'measured' ? 'measured' : 'estimate'}) |`,
    '|---:|---:|---:|',
    ...r.front.points.map(
      (p) => `| ${p.trial === -1 ? 'defaults' : p.trial} | ${f(p.quality)} | ${p.p99_ms.toFixed(3)} |`,
    ),
    '',
    '| domain profile | trial | why |',
    '|---|---:|---|',
    ...r.profiles.map(
      (p) =>
        `| ${p.name} (${p.description}) | ${p.trial === -1 ? 'defaults' : (p.trial ?? '-')} | ${p.rationale.join('; ').replace(/\|/g, '\\|')} |`,
    ),
    ...(r.holdout
      ? [
          '',
          `Held-out data: ${r.holdout.split}.`,
          '',
          `| trial | ${r.metric} (tuning) | ${r.metric} (held-out) | gap (absolute) | P99 ms (held-out) | where |`,
          '|---:|---:|---:|---:|---:|---|',
          ...r.holdout.rows.map(
            (h) =>
              `| ${h.trial === -1 ? 'defaults' : h.trial} | ${f(h.tuning.quality)} | ${h.holdout ? f(h.holdout.quality) : `failed: ${h.error ?? ''}`} | ${h.gap === null ? '-' : signed(h.gap)} | ${h.holdout ? h.holdout.p99_ms.toFixed(3) : '-'} | ${h.roles.join(', ')} |`,
          ),
        ]
      : []),
    ...(r.validation ? holdoutValidation(r.validation) : []),
    ...(r.routed
      ? [
          '',
          `Routed profile (minimum gain ${r.routed.min_gain}):`,
          '',
          '| query type | base | type sweep | gain | override |',
          '|---|---:|---:|---:|---|',
          ...r.routed.per_type.map(
            (t) =>
              `| ${t.type} | ${f(t.base_score)} | ${f(t.best_score)} | ${signed(t.gain)} | ${t.override ? `yes (${t.keys.length} parameters)` : 'no'} |`,
          ),
        ]
      : []),
    ...(r.missing_types.length
      ? ['', `No scored queries of type ${r.missing_types.join(', ')} in the data: no sweep.`]
      : []),
    '',
  ]
}

/** Each deployable retrieval profile against the defaults on the held-out conversations, with the interval and the verdict. */
function holdoutValidation(v: NonNullable<NonNullable<PhaseResults['search']['retrieval']>['validation']>): string[] {
  const level = confidenceLabel(v.confidence)
  const interval = (d: {value: number; low: number | null; high: number | null}) =>
    `${signed(d.value)} [${d.low === null ? '-' : signed(d.low)}, ${d.high === null ? '-' : signed(d.high)}]`
  return [
    '',
    `Validation against the defaults on the ${v.queries} held-out questions (${v.split}): ${v.rule} (margin ${v.margin}, ${v.resamples} resamples). ` +
      `The defaults score ${f(v.defaults_quality)} there. Tuning numbers are on the tuning conversations, held-out numbers on the others; the verdict is what \`kt deploy\` reads.`,
    '',
    `| profile | trial | ${v.metric} (tuning) | ${v.metric} (held-out) | defaults (held-out) | profile - defaults, ${level} CI | questions better / worse | verdict |`,
    '|---|---:|---:|---:|---:|---|---:|---|',
    ...v.profiles.flatMap((p) => [
      `| ${p.name} | ${p.trial === null ? '-' : p.trial === -1 ? 'defaults' : p.trial} | ${p.tuning_quality === null ? '-' : f(p.tuning_quality)} | ${f(p.quality)} | ${f(p.defaults_quality)} | ${interval(p.delta)} | ${p.better} / ${p.worse} | ${p.verdict === 'pass' ? 'PASS' : '**FAIL**'} |`,
      ...(p.per_type ?? []).map(
        (t) =>
          `| ${p.name}, its ${t.type} questions (${t.queries}) | | | ${f(t.quality)} | ${f(t.defaults_quality)} | ${interval(t.delta)} | ${t.better} / ${t.worse} | ${t.passed === null ? `overall only (${t.queries} < ${v.min_type_questions} questions)` : t.passed ? 'pass' : '**fail**'} |`,
      ),
    ]),
    ...v.profiles.filter((p) => p.note).flatMap((p) => ['', `${p.name}: ${p.note}.`]),
  ]
}

/** Why the front has few points: only trials at the largest budget scored every query. */
function fidelityNote(trials: NonNullable<NonNullable<PhaseResults['search']['retrieval']>['trials']>): string {
  const full = trials.filter((t) => t.set !== 'lower budget')
  const lower = trials.length - full.length
  const budgets = [...new Set(trials.map((t) => t.budget))].sort((a, b) => a - b)
  return (
    `Only trials at the largest budget (${budgets.at(-1)}) scored every query, so only they are compared: ${full.length} of the ${trials.length} (the defaults included). ` +
    `The other ${lower} ran at budgets ${budgets.slice(0, -1).join(', ') || '-'} on fewer queries (BOHB spends most of its evaluations at the lower fidelities); the front chart shows them faintly, and hovering any point shows its configuration and metrics (\`kt report RUN_DIR --format html\`).`
  )
}

function validation(v: PhaseResults['validation']): string[] {
  const out = [
    '## Phase 5: validation',
    '',
    `Optimum ${weights(v.optimum)} against the baseline ${weights(v.baseline)} on data it was not tuned on.`,
    '',
  ]
  for (const d of v.datasets) {
    out.push(
      `### ${d.dataset} (${d.role}, ${d.turns} turns)`,
      '',
      '| measure | baseline | optimum | change |',
      '|---|---|---|---|',
      `| Pearson | ${ci(d.baseline.pearson)} | ${ci(d.optimum.pearson)} | ${delta(d.delta.pearson)} |`,
      `| Spearman | ${ci(d.baseline.spearman)} | ${ci(d.optimum.spearman)} | ${delta(d.delta.spearman)} |`,
      `| token budget (tokens kept) | ${f(d.baseline.token_budget, 1)} | ${f(d.optimum.token_budget, 1)} | ${d.token_budget_change.value === null ? `n/a: ${d.token_budget_change.note ?? 'undefined'}` : `${signed(d.token_budget_change.value, 1)}% (relative; a deterministic count, no interval)`} |`,
      '',
      `Mean per-turn change: ${signed(d.mean_change.value)} [${signed(d.mean_change.low)}, ${signed(d.mean_change.high)}] (absolute, ${d.mean_change.unit}, bootstrap ${confidenceLabel(d.mean_change.confidence)}); turns scored higher: ${pct(d.share_positive.value)} [${pct(d.share_positive.low)}, ${pct(d.share_positive.high)}] (Wilson ${confidenceLabel(d.share_positive.confidence)}).`,
      '',
      'Detail-level transitions (rows: baseline, columns: optimum):',
      '',
      `| baseline \\ optimum | ${d.levels.order.join(' | ')} |`,
      `|---|${d.levels.order.map(() => '---:').join('|')}|`,
      ...d.levels.order.map((l, i) => `| ${l} | ${d.levels.transitions[i].join(' | ')} |`),
      '',
      '| criterion | metric | threshold | value | verdict |',
      '|---|---|---|---:|---|',
      ...d.verdicts.map(
        (c) =>
          `| ${criterionDescription(c)} | ${c.metric}${c.confidence === undefined ? '' : ` (${confidenceLabel(c.confidence)} interval)`} | ${c.op} ${criterionValue(c.metric, c.threshold)} | ${c.value === null && c.note ? `undefined (${c.note.replace(/^not evaluable: /, '')})` : criterionValue(c.metric, c.value)} | ${c.evaluable === false ? '**NOT EVALUABLE** (not a pass)' : c.passed ? 'PASS' : '**FAIL**'} |`,
      ),
      '',
    )
  }
  return out
}

function deploy(d: PhaseResults['deploy']): string[] {
  return [
    '## Phase 6: profiles',
    '',
    '| profile | weights | files |',
    '|---|---|---|',
    ...d.profiles.map(
      (p) =>
        `| ${p.name} | ${weights(p.weights)} | ${p.files.map((x) => `[${x.split('/').pop()}](${x})`).join(', ')} |`,
    ),
    '',
    `Deploy one with \`kt deploy PROFILE.json --target T\` (the gate reads its verdict); \`kt rollback --target T\` restores the profile the last deploy replaced, from T's locked history. Rollout: ${d.rollout.map((s) => `${s.traffic_percent}%`).join(' → ')}.`,
    '',
    ...(d.retrieval
      ? [
          `Retrieval profiles: ${d.retrieval.domain.map((p) => `[${p.name}](${p.files[2]}) (trial ${p.trial}${p.verdict ? `, validation ${p.verdict}` : ''})`).join(', ')}${d.retrieval.routed ? `; routed profile [${d.retrieval.routed.split('/').pop()}](${d.retrieval.routed}) (overrides for: ${d.retrieval.overridden_types.join(', ') || 'none'}${d.retrieval.routed_verdict ? `, validation ${d.retrieval.routed_verdict}` : ''}; use it with \`kt eval --profile\`)` : " (in the engine's own variable names)"}.`,
          '',
        ]
      : []),
  ]
}

function engineImportance(e: NonNullable<PhaseResults['visualize']['engine']>): string[] {
  const params = [...new Set(e.importance.flatMap((i) => i.params.map((p) => p.param)))]
  const share = (i: (typeof e.importance)[number], param: string) => {
    const p = i.params.find((x) => x.param === param)
    return p ? pct(p.importance) : '-'
  }
  return [
    `Engine ${e.engine}: P99 latency from ${e.latency_label} (the kind its study recorded). Parameter importance per objective (fANOVA over a random forest, shares of explained variance, from phase 4's trials):`,
    '',
    `| parameter | ${e.importance.map((i) => `${i.objective} (${i.trials_used} trials)`).join(' | ')} |`,
    `|---|${e.importance.map(() => '---:').join('|')}|`,
    ...params.map((p) => `| ${p} | ${e.importance.map((i) => share(i, p)).join(' | ')} |`),
    ...e.importance.filter((i) => i.note).map((i) => `\n${i.objective}: ${i.note}`),
    '',
  ]
}

function charts(v: PhaseResults['visualize']): string[] {
  return [
    '## Phase 7: charts',
    '',
    ...(v.engine ? engineImportance(v.engine) : []),
    ...v.charts.flatMap((c) => [
      `### ${c.title}`,
      '',
      `![${c.title}](${c.png})`,
      '',
      `Spec: [${c.spec}](${c.spec}) · [SVG](${c.svg})`,
      '',
    ]),
  ]
}

/**
 * A criterion's text as the plan wrote it; when it names an interval level other than the one the
 * run used (the plan's bootstrap.confidence), the report says so instead of repeating the text.
 */
function criterionDescription(c: PhaseResults['validation']['datasets'][number]['verdicts'][number]): string {
  if (c.confidence === undefined) return c.description
  const typed = [...c.description.matchAll(/(\d+(?:\.\d+)?)%\s+(?:confidence\s+)?interval/g)].map((m) => Number(m[1]))
  const used = Number((100 * c.confidence).toFixed(1))
  return typed.some((t) => t !== used)
    ? `${c.description} (the plan's text says ${typed.map((t) => `${t}%`).join(', ')}; the interval used is ${confidenceLabel(c.confidence)}, from bootstrap.confidence)`
    : c.description
}

function verdictWord(v: PhaseResults['validation']['datasets'][number]['verdicts'][number]): string {
  return v.evaluable === false ? 'NOT EVALUABLE' : v.passed ? 'PASS' : 'FAIL'
}

function tokenChange(c: PhaseResults['validation']['datasets'][number]['token_budget_change']): string {
  return c.value === null ? `n/a (${c.note ?? 'undefined'})` : `${signed(c.value, 1)}% (relative)`
}

/** A criterion's value in its own unit: relative token changes as percentages, correlations as numbers. */
function criterionValue(metric: string, value: number | null): string {
  if (value === null) return 'undefined'
  if (metric === 'token_budget_change_rel') return `${signed(100 * value, 1)}% (relative)`
  if (metric === 'share_positive') return pct(value)
  return `${signed(value)} (absolute)`
}

function weights(w: WeightsRecord): string {
  return `decay ${f(w.decay, 2)} / surprise ${f(w.surprise, 2)} / relevance ${f(w.relevance, 2)} / habituation ${f(w.habituation, 2)}`
}

function ci(i: Interval): string {
  if (i.estimate === null) return 'undefined (constant scores)'
  return `${f(i.estimate)} [${fn(i.low)}, ${fn(i.high)}]`
}

function delta(d: DeltaInterval): string {
  if (d.estimate === null) return 'undefined'
  return `${signed(d.estimate)} [${signed(d.low ?? NaN)}, ${signed(d.high ?? NaN)}] (${d.kind}, ${d.unit})`
}

/** A delta with its interval only (the table header says kind, unit and level). */
function deltaBrief(d: DeltaInterval): string {
  if (d.estimate === null) return 'undefined'
  return `${signed(d.estimate)} [${d.low === null ? 'undefined' : signed(d.low)}, ${d.high === null ? 'undefined' : signed(d.high)}]`
}

function f(x: number, digits = 3): string {
  return x.toFixed(digits)
}

function fn(x: number | null, digits = 3): string {
  return x === null ? 'undefined' : x.toFixed(digits)
}

function signed(x: number, digits = 3): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`
}

function pct(x: number, digits = 1): string {
  return `${(100 * x).toFixed(digits)}%`
}

function seedCheck(s: SeedRobustness): string[] {
  const names = Object.keys(s.spread)
  const out = [
    '## Seed check',
    '',
    `The search and validation re-run for seeds ${s.seeds.join(', ')} (the plan's datasets, with each seed's random choices: search sampling, BOHB, bootstrap resamples). ${s.run_verdict ? `The run's verdict (${s.run_verdict.toUpperCase()})` : 'The verdict'} holds on ${s.verdict_held} of ${s.seeds.length} seeds${s.verdict_holds_on_every_seed ? '' : ': it DEPENDS ON THE SEED'}.`,
    '',
  ]
  out.push(
    `| seed | ${names.join(' | ')} | objective | verdict |`,
    `|---:|${names.map(() => '---:').join('|')}|---:|---|`,
  )
  for (const r of s.per_seed) {
    const w = r.optimum as Record<string, number>
    out.push(
      `| ${r.seed} | ${names.map((n) => w[n].toFixed(2)).join(' | ')} | ${r.objective === null ? '-' : r.objective.toFixed(3)} | ${r.validation_passed ? 'PASS' : `${r.verdict === 'not-validated' ? 'NOT VALIDATED' : 'FAIL'}${r.failed.length ? ` (${r.failed.join(', ')})` : r.note ? ` (${r.note})` : ''}`} |`,
    )
  }
  out.push(
    `| range | ${names.map((n) => `${s.spread[n].min.toFixed(2)}-${s.spread[n].max.toFixed(2)}`).join(' | ')} | | |`,
  )
  out.push(
    `| sd | ${names.map((n) => (s.spread[n].sd === null ? 'n/a' : s.spread[n].sd.toFixed(3))).join(' | ')} | | |`,
    '',
  )
  return out
}
