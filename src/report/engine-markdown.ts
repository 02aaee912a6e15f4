import type {AblationDelta} from '../eval/ablation.js'
import {formatDelta} from '../eval/ablation.js'
import {confidenceLabel} from './confidence.js'
import type {EngineComparison, EngineReport} from './types.js'

/**
 * report.md's sections for a format-2 plan's engine (Report.engine): the summary with the verdict,
 * phase 3 (the ablation table and the minimal profile), phase 4 (the study, as for any retrieval
 * study: `retrievalSection`), phase 5 (overall and per category) and phase 6 (the profiles); a
 * partial run (kt phase N) has the sections of the phases it ran.
 */
export function engineSections(
  e: EngineReport,
  retrievalSection: (r: NonNullable<EngineReport['search']>) => string[],
): string[] {
  const {ablation: a, validation: v} = e
  return [
    '## Summary',
    '',
    `- Engine: ${e.engine.name} (\`${e.engine.ref}\`), tuned on \`${e.data}\` for ${e.metric}; P99 ${e.engine.latency === 'cost_model' ? "from the engine's cost model" : 'measured on the clock'}.`,
    ...(a ? [`- Ablation: ${a.headline}`] : []),
    ...(v
      ? [
          `- Validation: the tuned profile ${formatDelta(v.tuned.delta)} against ${v.tuned.against}, the minimal profile ${formatDelta(v.minimal.delta)} (${confidenceLabel(v.confidence)} paired bootstrap, ${v.tuned.queries} held-out questions).`,
          `- Verdict: ${v.verdict === 'pass' ? '**pass**' : '**failed**'}: ${v.rule}.`,
        ]
      : []),
    ...Object.entries(e.not_applicable ?? {}).map(([phase, why]) => `- Phase ${phase}: not applicable: ${why}.`),
    '',
    ...(a && e.tuned ? ablationSection(e, a, e.tuned) : []),
    ...(e.search ? [`## Phase 4: search of ${e.engine.name}`, '', ...retrievalSection(e.search)] : []),
    ...(v
      ? [
          `## Phase 5: validation of ${e.engine.name}`,
          '',
          `Held-out conversations: ${v.split}. Rule: ${v.rule}.`,
          '',
          `| profile | against | questions | ${e.metric} (reference) | ${e.metric} (profile) | profile - reference, ${confidenceLabel(v.confidence)} CI | better / worse | verdict |`,
          '|---|---|---:|---:|---:|---|---:|---|',
          ...[v.tuned, v.minimal].flatMap((c) => comparisonRows(c)),
          '',
        ]
      : []),
    ...(e.deploy
      ? [
          '## Phase 6: profiles',
          '',
          ...e.deploy.profiles.map(
            (p) =>
              `- [${p.name}](${p.files[2]}) (validation ${p.verdict}; \`kt deploy\` reads it through the same gate as every profile)`,
          ),
          '',
        ]
      : []),
  ]
}

/** Phase 3: each change reverted and alone, the declared groups, and the minimal profile. */
function ablationSection(
  e: EngineReport,
  a: NonNullable<EngineReport['ablation']>,
  tuned: NonNullable<EngineReport['tuned']>,
): string[] {
  const level = confidenceLabel(a.confidence)
  const q = (x: number) => x.toFixed(3)
  const changeRow = (name: string, params: string, reverted: AblationDelta, alone: AblationDelta, kept: string) =>
    `| ${name} | ${params} | ${formatDelta(reverted)} | ${formatDelta(alone)} | ${kept} |`
  // a group is in the minimal profile whole, in part (which of its changes) or not at all
  const groupKept = (members: readonly string[]) => {
    const kept = members.filter((p) => a.minimal.changes.includes(p))
    return kept.length === 0 ? 'no' : kept.length === members.length ? 'yes' : `partly: ${kept.join(', ')}`
  }
  const scalar = (x: unknown) => (typeof x === 'number' ? String(Number(x.toPrecision(4))) : String(x))
  const value = (x: unknown): string =>
    typeof x === 'object' && x !== null
      ? Object.entries(x)
          .map(([k, y]) => `${k} ${scalar(y)}`)
          .join(', ')
      : scalar(x)
  return [
    `## Phase 3: ablation of ${e.engine.name}`,
    '',
    a.headline,
    '',
    `The tuned profile (${tuned.profile === undefined ? `trial ${tuned.trial}, ${e.metric} ${q(tuned.tuning_quality ?? NaN)} on the tuning conversations` : `\`${tuned.profile}\`, the plan's ablation.profile`}) against the defaults (${q(a.defaults_quality)} held-out) on ${a.queries} held-out questions, ${a.resamples} paired bootstrap resamples at ${level}. "Reverted": the tuned profile with that change set back to its default, minus the tuned profile. "Alone": the defaults with only that change, minus the defaults.`,
    '',
    '| change | default -> tuned | reverted (vs tuned) | alone (vs defaults) | in the minimal profile |',
    '|---|---|---|---|---|',
    ...a.changes.map((c) =>
      changeRow(
        c.parameter,
        `${value(c.default)} -> ${value(c.tuned)}`,
        c.reverted,
        c.alone,
        a.minimal.changes.includes(c.parameter) ? 'yes' : 'no',
      ),
    ),
    ...a.groups.map((g) =>
      changeRow(`group ${g.name}`, g.parameters.join(', '), g.reverted, g.alone, groupKept(g.parameters)),
    ),
    '',
    `Minimal profile (greedy backward elimination, each step tested against the tuned profile, margin ${a.margin}): ${a.minimal.changes.length ? a.minimal.changes.join(', ') : 'no change (the defaults)'}; ${formatDelta(a.minimal.against_tuned)} against the tuned profile, ${formatDelta(a.minimal.against_defaults)} against the defaults. Removed in order: ${a.minimal.steps.map((s) => `${s.removed} (${formatDelta(s.against_tuned)})`).join(', ') || 'none'}.`,
    '',
  ]
}

function comparisonRows(c: EngineComparison): string[] {
  const q = (x: number) => x.toFixed(3)
  return [
    `| ${c.name} | ${c.against} | ${c.queries} | ${q(c.reference_quality)} | ${q(c.delta.quality)} | ${formatDelta(c.delta)} | ${c.delta.better} / ${c.delta.worse} | ${c.passed ? 'PASS' : '**FAIL**'} |`,
    ...c.categories.map(
      (k) =>
        `| ${c.name}, ${k.category} | | ${k.queries} | ${q(k.reference_quality)} | ${q(k.delta.quality)} | ${formatDelta(k.delta)} | ${k.delta.better} / ${k.delta.worse} | |`,
    ),
  ]
}
