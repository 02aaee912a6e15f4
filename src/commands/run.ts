import {Flags} from '@oclif/core'
import {KtCommand, commonFlags} from '../cli/base.js'

export default class Run extends KtCommand {
  static override summary = 'Run all seven phases of the study and write the report.'
  static override description =
    'Runs property tests, datasets, ablation, search, validation, deploy profiles and charts, and writes report.json, report.md, charts/ and profiles/ to the output folder (default reports/<run-id>/). The run id comes from the seed and the plan, so the same inputs land in the same folder and give a byte-identical report.json (its timing section aside). A plan that names one engine (kt_plan 2: an engine file or kt:retrieval) runs the search of that engine, the ablation with the minimal profile, the validation per category and the profiles, and the verdict and exit code are those of the engine.'
  static override examples = [
    {
      description:
        'The default study: its optimum fails the token-budget criterion on uniform_50, so the verdict is FAIL (exit 1).',
      command: '<%= config.bin %> run',
    },
    {
      description: 'Another seed, another folder (the verdict is FAIL as above: exit 1).',
      command: '<%= config.bin %> run --seed 7 --out reports/study-seed7',
    },
    {
      description: 'A plan of your own (here the default one), summary as JSON (exit 1 as above).',
      command: '<%= config.bin %> run --plan phases/plan.default.json --json',
    },
    {
      description:
        "A plan that names one engine (kt_plan 2): the Python example tuned, its tuned profile ablated (the minimal profile) and validated against the engine's defaults on held-out conversations; on the small fixture the tuned profile does not transfer, so the engine's verdict is FAIL (exit 1).",
      command: '<%= config.bin %> run --plan examples/python-engine/plan.json --out reports/python-engine',
    },
    {
      description: "The optimum's spread over seeds 1-5 and the verdict on each (exit 1 as above).",
      command: '<%= config.bin %> run --seeds 1-5 --out reports/study-seeds',
    },
  ]
  static override flags = {
    ...commonFlags,
    resume: Flags.boolean({
      description:
        "Reuse the phase results an interrupted run left in the output folder, each only if computed from the same inputs (sha256 of the plan, datasets, retrieval data and engine files, and of kt's code) and with its output files intact; --json lists the phases not reused and why.",
      default: false,
    }),
    seeds: Flags.string({
      description:
        'Also re-run the search and validation (on the plan\'s datasets, with each seed\'s random choices) for these seeds, e.g. 1-5 or 1,3,7 (at most 20), and report how far the optimum moves and whether the verdict holds on each (report.json "seeds", report.md, --json).',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Run)
    const {runAndSummarise} = await import('../cli/study.js')
    const {parseSeedList} = await import('../../phases/lib/seeds.js')
    const checkSeeds = flags.seeds === undefined ? undefined : parseSeedList(flags.seeds)
    return runAndSummarise(this, {
      planFile: flags.plan,
      seed: flags.seed,
      outDir: flags.out,
      resume: flags.resume,
      checkSeeds,
    })
  }
}
