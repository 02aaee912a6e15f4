/** Tenant ids: they become folder names, so only safe ones are taken. */
import {InputError, describeValue} from '../util/errors.js'

/** Longest tenant id: ids become folder names, and 64 fits every file system's name limit with room. */
export const MAX_TENANT_ID_LENGTH = 64
/** Tenant ids: letters, digits, dot, dash, underscore, starting with a letter or digit (so no '/', '\\', '..' or hidden names). */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** Throws InputError unless `tenant` is a safe tenant id. */
export function validateTenantId(tenant: string): void {
  if (typeof tenant !== 'string' || tenant.length === 0)
    throw new InputError('tenant id', 'a non-empty id', describeValue(tenant))
  if (tenant.length > MAX_TENANT_ID_LENGTH)
    throw new InputError('tenant id', `at most ${MAX_TENANT_ID_LENGTH} characters`, `${tenant.length} characters`)
  if (!TENANT_ID_PATTERN.test(tenant))
    throw new InputError(
      'tenant id',
      'letters, digits, ".", "-" or "_", starting with a letter or digit (no path separators)',
      describeValue(tenant),
    )
}
