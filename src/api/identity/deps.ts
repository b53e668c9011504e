/** What the identity API plugin (Keystone v3) receives. */
import type { Identity } from '../../domain/identity/index.ts';
import type { ApiCommonDeps, ApiSettings } from '../common/deps.ts';

/** The identity API's dependencies: the identity services and the catalogue's region. */
export interface IdentityApiDeps extends ApiCommonDeps {
  readonly config: ApiSettings & { readonly identity: { readonly region: string } };
  readonly identity: Identity;
}
