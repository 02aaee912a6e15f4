import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_ONLINE_DIR} from '../../online/cli.js'
import {DEFAULT_REGISTRY} from '../../rank/defaults.js'

export default class OnlineServe extends KtCommand {
  static override summary =
    "Serve the tenants' bandits and the deployed reranker over HTTP (JSON), with a write-ahead journal (one fdatasync per batch)."
  static override description = [
    'Endpoints: POST /tenants (create: {tenant, profile (a kt_profile document) or config, and the init settings as snake_case fields, e.g. per_type}),',
    'GET /tenants/{id} (status), POST /tenants/{id}/choose ({query_id?, type?} -> query_id and configuration), POST /tenants/{id}/feedback',
    '({query_id, used: true} or {query_id, label: G}), GET|POST /rerank (scores candidates with the reranker deployed in --registry), POST /noop,',
    "GET /healthz, GET /metrics (Prometheus). A choose or feedback is answered only once its event is on disk: all tenants' events go to one",
    'journal in --dir/.journal, one pwrite and one fdatasync per batch (the tenant logs are written behind it; after a crash the next start or',
    'open applies it). Errors are JSON {error: {code, message, retry}} with a 4xx status (429 + Retry-After for a connection over --max-connections),',
    "or 503 + Retry-After when the request was not applied and may be repeated (503 too_many_tenants, past the descriptor budget, without: it is not to be retried), or 500 when the fault is on the server (state_damaged: a tenant's files do not read back as written;",
    'the client\'s message names no server path, the log line has the whole error); each error is one JSON line on stderr. Over HTTP the server owns the clock (a "now" field is refused).',
    'A reranker registry that becomes unreadable leaves the last good model serving (GET /healthz says reranker "stale"). Binds 127.0.0.1 unless --host says otherwise; any other host',
    'requires --token (or KT_SERVE_TOKEN), sent by clients as "Authorization: Bearer <token>". Request bodies must be Content-Type application/json (415; /rerank also',
    "takes application/octet-stream); a request with an Origin header (a web page's) is refused 403 unless --allow-origin lists it, and without --token",
    'only loopback Host names are served (403: DNS rebinding). The server holds the lock of every tenant it has',
    'open: kt online choose/feedback on the same --dir wait for it. SIGINT/SIGTERM stop it cleanly (requests in flight finish, snapshots written).',
    'See src/online/README.md, "The service".',
  ].join(' ')

  static override examples = [
    '<%= config.bin %> online serve --port 8080',
    {
      description:
        'Then, from another shell: a new tenant (the tenants kt online init made in --dir are served as they are), and its first query.',
      command:
        "curl -s -XPOST localhost:8080/tenants -H 'content-type: application/json' -d '{\"tenant\":\"web\"}' && curl -s -XPOST localhost:8080/tenants/web/choose -H 'content-type: application/json' -d '{}'",
    },
    {
      description:
        "With a server of the engine tenants' folder (kt online serve --dir reports/kt-py/online, after kt online init --engine ... --dir reports/kt-py/online kept the engine's table there): a new tenant tuning that engine's parameters.",
      command:
        'curl -s -XPOST localhost:8080/tenants -H \'content-type: application/json\' -d \'{"tenant":"py2","space":"engine:memengine-py"}\'',
    },
    '<%= config.bin %> online serve --host 0.0.0.0 --port 8080 --token "$(openssl rand -hex 16)"',
  ]

  static override flags = {
    dir: Flags.string({description: "Folder holding the tenants' logs and state.", default: DEFAULT_ONLINE_DIR}),
    port: Flags.integer({
      description:
        'Port (0: any free port; the line "listening on URL" on stdout says which; under --json a JSON line {listening, url, port, ...}).',
      default: 8080,
      min: 0,
      max: 65535,
    }),
    host: Flags.string({
      description: 'Address to bind; anything but a loopback address requires --token.',
      default: '127.0.0.1',
    }),
    token: Flags.string({
      description: 'Bearer token clients must send (at least 16 characters); required off loopback.',
      env: 'KT_SERVE_TOKEN',
    }),
    registry: Flags.string({
      description: 'Reranker registry whose deployed version POST /rerank serves.',
      default: DEFAULT_REGISTRY,
    }),
    'max-connections': Flags.integer({
      description:
        'Open connections at most (beyond: 429 Too Many Requests with Retry-After, and close). Default 10000, capped by the open-file limit minus 1024 (minus half of it under a limit below 2048); the descriptors left, less 64, cap open tenants (503 too_many_tenants).',
      min: 1,
    }),
    'allow-origin': Flags.string({
      description:
        'An Origin (scheme://host[:port]) whose browser requests are served (repeatable); requests with any other Origin header are refused 403.',
      multiple: true,
    }),
    'snapshot-every': Flags.integer({description: "Events between a tenant's snapshots (default 200).", min: 1}),
    'max-pending': Flags.integer({
      description:
        'Queries one open tenant remembers at most (default 20000, about 8 MB at 400 bytes a query); past it the oldest are forgotten (their open implicit window settles as unused, later feedback is late), counted in kt_pending_evicted_total.',
      min: 10,
    }),
    'max-pending-total': Flags.integer({
      description:
        'Queries all open tenants remember at most (default 41943: a 16 MiB budget at 400 bytes a query); past it a tenant that chooses is held to an equal share.',
      min: 10,
    }),
    'idle-tenant-seconds': Flags.integer({
      description:
        'A tenant without a request for this long is closed: snapshot written, descriptor and memory freed (default 300).',
      min: 1,
    }),
    'segment-bytes': Flags.integer({
      description:
        "Bytes of one journal segment (default 4 MiB): each is prepared ahead on disk, and a full one is retired into the tenants' logs. Smaller ones reach both sooner (tests of a full disk).",
      min: 65_536,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineServe)
    const {startServer} = await import('../../online/serve/server.js')
    const running = await startServer({
      dir: flags.dir,
      host: flags.host,
      port: flags.port,
      token: flags.token,
      registry: flags.registry,
      maxConnections: flags['max-connections'],
      snapshotEvery: flags['snapshot-every'],
      segmentBytes: flags['segment-bytes'],
      maxPendingPerTenant: flags['max-pending'],
      maxPendingTotal: flags['max-pending-total'],
      idleTenantMs: flags['idle-tenant-seconds'] === undefined ? undefined : flags['idle-tenant-seconds'] * 1000,
      allowOrigins: flags['allow-origin'],
    })
    // listening for the signal before the line that announces the server: a Ctrl-C right after it still stops it cleanly
    const stopped = new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
        void running.close().then(resolve)
      }
      process.on('SIGINT', stop)
      process.on('SIGTERM', stop)
    })
    // --json: stdout carries JSON only, one line when listening and one when stopped; the human line goes to stderr
    if (this.jsonEnabled()) {
      process.stdout.write(
        `${JSON.stringify({listening: true, url: running.url, host: running.host, port: running.port, dir: flags.dir, registry: flags.registry, pid: process.pid})}\n`,
      )
      process.stderr.write(`kt online serve: listening on ${running.url} (pid ${process.pid})\n`)
    } else
      process.stdout.write(
        `kt online serve: listening on ${running.url} (tenants in ${flags.dir}, reranker registry ${flags.registry}, pid ${process.pid})\n`,
      )
    await stopped
    if (this.jsonEnabled()) {
      process.stdout.write(`${JSON.stringify({stopped: true, url: running.url})}\n`)
      return undefined
    }
    this.log('kt online serve: stopped')
    return {stopped: true, url: running.url}
  }
}
