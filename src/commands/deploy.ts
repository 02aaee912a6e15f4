import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'

/** Default deployment folder of a space: one per parameter space, so importance and retrieval profiles live side by side. */
export function defaultTarget(space: string): string {
  return `reports/deployed/${space.replace(/[^A-Za-z0-9._-]+/g, '-')}`
}

export default class Deploy extends KtCommand {
  static override summary =
    'Deploy a profile through the deploy gate: make it the active one, keeping the replaced profile for rollback.'
  static override description =
    'Every profile kind (importance, retrieval, routed, engine) goes through one gate: a profile whose run failed validation, was not validated, has a leakage finding flagged, or records no metrics is refused (exit 1, one line saying why) unless --force --reason "..."; the forced deploy and its reason are recorded in TARGET/index.json. The profile is checked against its parameter space (weights summing to 1 within 1e-9, every parameter in range, env var names and values from a safe alphabet), then TARGET/active.json, active.env and active.sh are written under TARGET/lock; the replaced profile stays in the history for `kt rollback`. The default TARGET is reports/deployed/<space>. Exit codes: 0 deployed, 1 refused by the gate, 2 bad input.'
  static override examples = [
    {
      description:
        "After `kt run` (from the repository): the default study's optimum fails its token-budget criterion on uniform_50, so the gate refuses it (exit 1) and says why.",
      command: '<%= config.bin %> deploy reports/seed42-plan226273690f7b/profiles/optimum.json',
    },
    {
      description:
        "Deploy it anyway: the reason is recorded in the target's history (reports/deployed/importance/index.json).",
      command:
        '<%= config.bin %> deploy reports/seed42-plan226273690f7b/profiles/optimum.json --force --reason "larger token budget accepted for uniform traffic" --json',
    },
    {
      description:
        'A second deploy to the same folder makes the baseline active and keeps the optimum for `kt rollback` (the baseline is the reference, not validated itself: --force).',
      command:
        '<%= config.bin %> deploy reports/seed42-plan226273690f7b/profiles/baseline.json --force --reason "back to the reference weights"',
    },
    {
      description:
        'A retrieval profile goes to its own folder (reports/deployed/retrieval); the run tuned it on synth-7-1 and it is not worse than the defaults on the held-out synth-7-2 (verdict pass), so the gate lets it through.',
      command: '<%= config.bin %> deploy reports/seed42-plan226273690f7b/profiles/retrieval-high-throughput.json',
    },
    {
      description: 'The routed profile (per query type) over it, same folder (also validated on synth-7-2: pass).',
      command: '<%= config.bin %> deploy reports/seed42-plan226273690f7b/profiles/retrieval-routed.json',
    },
    {
      description:
        "After tuning the Python example (kt search --engine examples/python-engine/engine.json ... --out reports/kt-py): its profiles are the study's own measurements, not validated, so deploying one needs --force and a reason; it is written in the engine's own variable names.",
      command:
        '<%= config.bin %> deploy reports/kt-py/profiles/high-throughput.json --engine examples/python-engine/engine.json --target reports/kt-py/deployed --force --reason "staging trial"',
    },
    {
      description: 'Another of its profiles over it, same folder.',
      command:
        '<%= config.bin %> deploy reports/kt-py/profiles/best-quality.json --engine examples/python-engine/engine.json --target reports/kt-py/deployed --force --reason "quality first"',
    },
  ]
  static override args = {
    profile: Args.string({
      description: 'profile JSON (kt_profile) written by kt run (profiles/) or kt search --out',
      required: true,
    }),
  }
  static override flags = {
    target: Flags.string({description: 'Deployment folder (default reports/deployed/<space of the profile>).'}),
    engine: Flags.string({
      description:
        "The engine file (kt_engine: 1) of an engine profile, when the profile's own engine.file is not where it was (its parameters and their env names).",
    }),
    force: Flags.boolean({
      description:
        'Deploy a profile the gate refuses (failed or missing validation, flagged leakage, no metrics); needs --reason.',
      default: false,
    }),
    reason: Flags.string({
      description: 'Why a refused profile is deployed anyway; recorded with the deploy in TARGET/index.json.',
    }),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Deploy)
    const {deployProfile} = await import('../deploy/target.js')
    const {loadProfile} = await import('../deploy/load.js')
    const space = flags.engine ? (await import('../adapters/file.js')).loadEngineFile(flags.engine).space : undefined
    const target = flags.target ?? defaultTarget(loadProfile(args.profile, {space}).profile.space)
    const outcome = deployProfile(args.profile, target, {
      force: flags.force,
      reason: flags.reason,
      space,
      engineFile: flags.engine,
    })
    if (outcome.forced)
      process.stderr.write(
        `kt: warning: forced past the deploy gate (${outcome.gate}); reason recorded: ${outcome.reason}\n`,
      )
    this.log(
      `deployed ${outcome.kind} profile ${outcome.active} (validation ${outcome.verdict}) to ${target}/active.env${outcome.previous ? ` (replaced ${outcome.previous}; kt rollback --target ${target} restores it)` : ''}`,
    )
    return outcome
  }
}
