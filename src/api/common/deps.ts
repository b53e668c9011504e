/**
 * What every API plugin receives from the process that serves it: the public URL its links
 * are built on, and the token service its authentication hook validates callers with. Each API
 * adds what it uses in its own `deps.ts` — a plugin receives what it uses, not the process's
 * whole set of services (docs/architecture.md, "One folder, one job").
 */
import type { TokenService } from '../../domain/identity/tokens.ts';

/** The settings an API renders links with. */
export interface ApiSettings {
  /** The public base URL of the service, e.g. `http://127.0.0.1:8585` (no trailing slash). */
  readonly publicUrl: string;
}

/** The part every API plugin shares. */
export interface ApiCommonDeps {
  readonly config: ApiSettings;
  /** Validates the `X-Auth-Token` of each request. */
  readonly identity: { readonly tokens: TokenService };
}
