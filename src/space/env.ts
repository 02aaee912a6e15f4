/**
 * Which environment variable names a parameter table may declare. A deployed profile is sourced
 * into a shell or a service's environment, so a name must be a plain identifier and must not be
 * one that changes how the shell, the dynamic loader or a language runtime behaves (a parameter
 * called PATH, LD_PRELOAD or NODE_OPTIONS would make a profile run code).
 */

/** Letters, digits and underscores, starting with a letter; at most 64 characters. */
const ENV_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/

/** Names that shells, loaders and runtimes act on (bash(1) "Shell Variables", ld.so(8), node(1), python(1), perl(1), ruby(1), locale(7)). */
const RESERVED_ENV_NAMES: ReadonlySet<string> = new Set([
  'PATH',
  'HOME',
  'SHELL',
  'USER',
  'LOGNAME',
  'PWD',
  'OLDPWD',
  'IFS',
  'ENV',
  'BASH_ENV',
  'CDPATH',
  'GLOBIGNORE',
  'SHELLOPTS',
  'BASHOPTS',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'PROMPT_COMMAND',
  'PROMPT_DIRTRIM',
  'HISTFILE',
  'MAIL',
  'MAILPATH',
  'OPTIND',
  'OPTARG',
  'TMPDIR',
  'TERM',
  'TZ',
  'LANG',
  'LANGUAGE',
  'EDITOR',
  'VISUAL',
  'PAGER',
  'BROWSER',
  'SSH_AUTH_SOCK',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_EXEC_PATH',
  'EXECIGNORE',
  'FIGNORE',
  'INPUTRC',
  'HOSTFILE',
  'POSIXLY_CORRECT',
  'SUDO_ASKPASS',
  'SSH_ASKPASS',
  'GCONV_PATH',
  'NLSPATH',
  'HOSTALIASES',
  'RESOLV_HOST_CONF',
  'MALLOC_CHECK_',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'CLASSPATH',
  'GOPATH',
  'GOFLAGS',
  // zsh ties these lower-case names to PATH-like variables (compared upper-cased)
  'FPATH',
  'MANPATH',
  'MODULE_PATH',
  'PSVAR',
  'ZDOTDIR',
  'PROMPT',
  'RPROMPT',
  'PROMPT2',
  'PROMPT3',
  'PROMPT4',
  'SPROMPT',
])

/** Prefixes of names loaders and runtimes act on. */
const RESERVED_ENV_PREFIXES: readonly string[] = [
  'LD_',
  'DYLD_',
  'BASH_',
  'LC_',
  'NODE_',
  'NPM_',
  'PYTHON',
  'PERL',
  'RUBY',
  'GEM_',
  'JAVA_',
  'GLIBC_',
  'MALLOC_',
  'XDG_',
]

/** Why `name` cannot be a parameter's env var, or undefined when it can. */
export function checkEnvName(name: unknown): string | undefined {
  if (typeof name !== 'string' || !ENV_NAME_PATTERN.test(name))
    return 'an env var name of letters, digits and _, starting with a letter (at most 64)'
  // compared upper-cased: zsh ties path, cdpath, ... to PATH, CDPATH, ...
  const upper = name.toUpperCase()
  if (RESERVED_ENV_NAMES.has(upper) || RESERVED_ENV_PREFIXES.some((p) => upper.startsWith(p)))
    return 'an env var name that no shell, loader or runtime acts on (not PATH, IFS, LD_*, NODE_*, ...)'
  return undefined
}
