import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {tenantFlags} from '../../online/cli.js'
import {InputError} from '../../util/errors.js'

export default class OnlineInit extends KtCommand {
  static override summary = "Create a tenant's bandits, with the prior taken from a deployed profile."
  static override description =
    "A --profile becomes the prior only through the deploy gate, as with kt deploy: one kt deploy refuses is refused with the same line and exit 1 unless --force --reason \"why\" (kept in the tenant's init record); a routed profile's per-type overrides seed each query type's bandits with --per-type and are refused without it. --engine keeps the engine file's parameter table beside the tenants only if none is kept under its name (a different one is refused). Each tuned parameter is cut into 10 bins (log-scale parameters in log space; categoricals one arm per choice; simplex members binned and projected back onto the floored simplex); every bin is an arm with its own Dirichlet posterior over reward levels (Beta for --levels 2). Bins near the profile's value start with extra prior mass (--prior-strength pseudo-observations of the top level on the profile's bin, spread to its neighbours): with the default 2 a new tenant explores around its profile from its first query; 10-30 keep it near the profile until evidence outweighs them. --feedback says what the tenant will send: implicit uses (a query whose 5-minute window closes unused is a 0; labels, if sent too, add evidence) or labels only (no window; --used is refused). The settings are fixed at creation and kept in the tenant's log."
  static override examples = [
    '<%= config.bin %> online init --tenant acme',
    '<%= config.bin %> online init --tenant graded --feedback labels --prior-strength 10',
    {
      description:
        "An external engine's parameters (after kt search --engine ... --out reports/kt-py, its profile as the prior). The profile passes the deploy gate as with kt deploy: the study's own measurements are no validation, so it needs --force and a reason, kept in the tenant's init record.",
      command:
        '<%= config.bin %> online init --tenant py --engine examples/python-engine/engine.json --profile reports/kt-py/profiles/best-quality.json --dir reports/kt-py/online --force --reason "staging trial"',
    },
    {
      description:
        'After `kt run` (which writes the profiles): a tenant whose prior is a deployed domain profile (validated on held-out data, so the gate lets it through).',
      command:
        '<%= config.bin %> online init --tenant fin --profile reports/seed42-plan226273690f7b/profiles/retrieval-high-throughput.json --forgetting adaptive --levels 2',
    },
  ]

  static override flags = {
    ...tenantFlags,
    space: Flags.string({description: 'Parameter space the bandits tune.', default: 'retrieval'}),
    engine: Flags.string({
      description:
        "Tune an external engine's parameters instead: its engine file (kt_engine: 1); the table is kept with the tenants, --profile is then one of its profiles (kt search --engine ... --out).",
    }),
    profile: Flags.string({
      description: "Deployed profile JSON (kt_profile) whose configuration is the prior; default the space's defaults.",
    }),
    levels: Flags.integer({
      description: 'Reward levels: explicit labels are 0..levels-1 (2 = binary feedback, Beta posteriors).',
      default: 4,
    }),
    forgetting: Flags.string({
      description:
        'periodic (5% toward the prior every 500 queries), adaptive (Page-Hinkley test for falls of the reward plus a per-arm change model that re-tries long-idle bins) or none.',
      options: ['periodic', 'adaptive', 'none'],
      default: 'periodic',
    }),
    sampler: Flags.string({
      description: 'Posterior draw: logit (default), gaussian or exact.',
      options: ['logit', 'gaussian', 'exact'],
    }),
    tuned: Flags.string({
      description:
        'Comma-separated parameters to tune (a simplex group by its name). Default: those the space\'s table marks online (retrieval: 11 of them; an engine file: its "online": true parameters and groups); a table that marks none: every parameter.',
    }),
    seed: Flags.integer({description: 'Seed of the per-query draws.', default: 42}),
    feedback: Flags.string({
      description:
        'What the tenant sends: implicit (uses; an unused window is a 0; labels optional) or labels (graded labels only).',
      options: ['implicit', 'labels'],
      default: 'implicit',
    }),
    'implicit-window-ms': Flags.integer({
      description:
        'How long after its query a use still counts, in ms (default 300000, 5 minutes); a query whose window closes unused is a 0.',
      min: 1,
    }),
    'decay-every': Flags.integer({
      description: 'Periodic forgetting: decay the evidence every this many queries (default 500).',
      min: 1,
    }),
    'decay-fraction': Flags.string({
      description: 'Periodic forgetting: share of the evidence removed at each decay, in (0, 1) (default 0.05).',
    }),
    'per-type': Flags.boolean({
      description:
        'One set of bandits per query type (the --type each choose names: entity_lookup, temporal, multi_hop, simple_factual, exploratory), each starting from the profile prior; queries without a type use the shared set.',
    }),
    force: Flags.boolean({
      description:
        'Create the tenant from a --profile the deploy gate refuses (failed or missing validation, flagged leakage, no metrics), as kt deploy --force; needs --reason.',
      default: false,
    }),
    reason: Flags.string({
      description:
        "Why a refused profile is used anyway; recorded in the tenant's init record (kt online status shows it).",
    }),
    'prior-strength': Flags.integer({
      description:
        "Pseudo-observations of top reward on the profile's bin, spread to its neighbours (default 2): larger keeps a new tenant's first draws within one bin of its profile more often (10: 76% binary / 93% 4 levels; 30: 88% / 98%); the exact bin stays below about half, since its neighbours gain as much. At most 1e8.",
      min: 0,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineInit)
    const {openTenant} = await import('../../online/library.js')
    // Only read here: the table is kept beside the tenants, and the profile gated, by openTenant, once everything is checked.
    const engine = flags.engine
      ? {space: (await import('../../adapters/file.js')).loadEngineFile(flags.engine).space, file: flags.engine}
      : undefined
    if (engine && flags.space !== 'retrieval')
      throw new InputError('--space', 'no --space with --engine (the engine file names the space)', flags.space)
    const space = engine?.space.id ?? flags.space
    if ((flags.force || flags.reason !== undefined) && !flags.profile)
      throw new InputError('--force/--reason', 'them only with --profile', 'no --profile')
    let fromProfile
    if (flags.profile) {
      const {readJson} = await import('../../util/fs.js')
      fromProfile = {document: readJson(flags.profile), file: flags.profile, force: flags.force, reason: flags.reason}
    }
    if (
      (flags['decay-every'] !== undefined || flags['decay-fraction'] !== undefined) &&
      flags.forgetting !== 'periodic'
    )
      throw new InputError(
        '--decay-every/--decay-fraction',
        'them only with --forgetting periodic',
        `--forgetting ${flags.forgetting}`,
      )
    let decayFraction: number | undefined
    if (flags['decay-fraction'] !== undefined) {
      decayFraction = Number(flags['decay-fraction'])
      if (!(decayFraction > 0 && decayFraction < 1))
        throw new InputError('--decay-fraction', 'a fraction in (0, 1)', flags['decay-fraction'])
    }
    const {MAX_PRIOR_STRENGTH} = await import('../../online/prior.js')
    if (flags['prior-strength'] !== undefined && flags['prior-strength'] > MAX_PRIOR_STRENGTH)
      throw new InputError(
        '--prior-strength',
        `an integer in 0..${MAX_PRIOR_STRENGTH} (beyond it float64 cannot tell the profile's arms apart)`,
        String(flags['prior-strength']),
      )
    const spec = {
      space,
      levels: flags.levels,
      ...(flags.sampler === undefined ? {} : {sampler: flags.sampler as 'logit' | 'gaussian' | 'exact'}),
      forgetting: flags.forgetting as 'periodic' | 'adaptive' | 'none',
      ...(flags.tuned
        ? {
            tuned: flags.tuned
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean),
          }
        : {}),
      seed: flags.seed,
      feedback: flags.feedback as 'implicit' | 'labels',
      ...(flags['decay-every'] === undefined ? {} : {decay_every: flags['decay-every']}),
      ...(decayFraction === undefined ? {} : {decay_fraction: decayFraction}),
      ...(flags['prior-strength'] === undefined ? {} : {prior_strength: flags['prior-strength']}),
      ...(flags['implicit-window-ms'] === undefined ? {} : {implicit_window_ms: flags['implicit-window-ms']}),
      ...(flags['per-type'] ? {per_type: true} : {}),
    }
    const tenant = openTenant({dir: flags.dir, tenant: flags.tenant, create: spec, fromProfile, engine})
    const {init} = tenant.store.learner
    const dims = tenant.store.learner.bandit.dims
    const settings = tenant.store.learner.bandit.settings
    await tenant.close()
    const origin = init.origin
    if (origin?.forced)
      process.stderr.write(
        `kt: warning: forced past the deploy gate (${origin.gate}); reason recorded in the tenant's init record: ${origin.reason}\n`,
      )
    if (!this.jsonEnabled()) {
      this.log(
        `tenant ${flags.tenant} created in ${flags.dir}: space ${init.space}, ${dims.length} dimensions (${dims.map((d) => `${d.key}:${d.values.length}`).join(', ')})`,
      )
      this.log(
        `levels ${settings.levels}, sampler ${settings.sampler}, forgetting ${settings.forgetting.kind}, feedback ${settings.feedback}${settings.priorStrength === undefined ? '' : `, prior strength ${settings.priorStrength}`}${settings.perType ? ', one set of bandits per query type' : ''}`,
      )
      if (origin)
        this.log(
          `prior: ${origin.kind} profile ${origin.name} (validation ${origin.verdict}${origin.forced ? ', forced past the deploy gate' : ''})${init.overrides ? `; overrides seed ${Object.keys(init.overrides).join(', ')}` : ''}`,
        )
    }
    const {snakeKeys} = await import('../../util/json-keys.js')
    return {
      tenant: flags.tenant,
      dir: flags.dir,
      space: init.space,
      dimensions: dims.map((d) => ({key: d.key, arms: d.values})),
      settings: snakeKeys(settings),
      prior: origin ? {...origin, overrides: init.overrides ?? {}} : null,
    }
  }
}
